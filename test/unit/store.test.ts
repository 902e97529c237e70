// The store and group commit: one contract suite run on each backend, on real databases (a
// temporary SQLite file, a fresh PostgreSQL database on 127.0.0.1:5432).
import { spawn } from 'node:child_process';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import fc from 'fast-check';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createInquiryService } from '../../src/inquiries/service.js';
import { ACROSS_PROCESSES, IN_PROCESS } from '../../src/storage/bulk.js';
import { dueDeliveries } from '../../src/storage/claim-due.js';
import { openDatabase, openExistingDatabase } from '../../src/storage/database.js';
import {
  type BatchProcessor,
  causedByAnItem,
  EXTRA_LANE_AFTER_MS,
  EXTRA_LANE_AT,
  GroupCommitter,
  MAX_BATCH_SIZE,
} from '../../src/storage/group-commit.js';
import { readSchemaVersion } from '../../src/storage/migrations.js';
import type { AttemptRecord, InquiryRecord, IntakeWrites, Store, Tx } from '../../src/storage/ports.js';
import { RolledBackError } from '../../src/storage/postgres-locked-transaction.js';
import type { Database } from '../../src/storage/schema.js';
import { createStore } from '../../src/storage/store.js';
import { validInquiry } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase, freshPostgres, freshSqlite, postgresAdmin, storePerTest } from '../helpers/databases.js';

const inquiry = (reference: string, receivedAt = new Date()): InquiryRecord => ({
  reference,
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: null,
  message: `message of ${reference}`,
  clientId: null,
  receivedAt,
});

/**
 * Holds an advisory lock on `name` in a transaction of its own until released. It resolves once the
 * lock is held: a statement of that transaction has been answered (its `begin`, which takes the
 * lock, goes out without being waited for).
 */
async function holdLock(store: Store, name: string): Promise<{ release: () => Promise<void> }> {
  let letGo = () => {};
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let holding = () => {};
  const locked = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const holder = store.transaction(
    async (tx) => {
      await store.inquiries.findByReference('INQ-HOLDER', tx);
      holding();
      await held;
    },
    { lock: [name] },
  );
  await Promise.race([locked, holder]);
  return {
    release: async () => {
      letGo();
      await holder;
    },
  };
}

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  let store: Store;
  let database: FreshDatabase;
  afterEach(async () => {
    vi.restoreAllMocks();
    await store?.close().catch(() => {});
    await database?.drop();
  });

  /** Stores an inquiry per reference (received at `at`), each with a delivery per channel, in one transaction. */
  async function queueInquiries(references: readonly string[], channels: readonly string[], at: Date): Promise<void> {
    await store.transaction(async (tx) => {
      await store.inquiries.insertMany(
        references.map((reference) => ({ inquiry: inquiry(reference, at), fingerprint: reference })),
        tx,
      );
      await store.outbox.enqueue(references, channels, at, tx);
    });
  }

  async function openTempStore(): Promise<Store> {
    database = await fresh();
    store = createStore(await openDatabase(database.config));
    return store;
  }

  it('refuses a database that a newer release has migrated, naming the migration it does not know', async () => {
    await openTempStore();
    await store.close();
    const opened = await openDatabase(database.config);
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_a_newer_release', '2099-01-01T00:00:00.000Z')`.execute(
      opened.db,
    );
    await opened.db.destroy();
    await expect(openDatabase(database.config)).rejects.toThrow(
      'DATABASE_URL: the database has migration 999_from_a_newer_release, which this release does not know',
    );
  });

  describe('transactions', () => {
    it('run one after the other where they lock a name in common; one that fails rolls back and lets go of it', async () => {
      await openTempStore();
      const order: string[] = [];
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = store.transaction(
        async (tx) => {
          await store.inquiries.insertMany([{ inquiry: inquiry('INQ-LOCK01'), fingerprint: 'fp-lock-1' }], tx);
          order.push('first begins'); // its insert answered: it holds the locks
          await held;
          order.push('first commits');
        },
        { lock: ['a name', 'another'] },
      );
      while (order.length === 0) await sleep(5);
      let seenBySecond: InquiryRecord | undefined;
      // Its statements wait for the locks (on PostgreSQL they go out right behind its begin).
      const second = store.transaction(
        async (tx) => {
          seenBySecond = await store.inquiries.findByReference('INQ-LOCK01', tx);
          order.push('second has read');
        },
        { lock: ['a third', 'a name'] },
      );
      await sleep(200);
      expect(order).toEqual(['first begins']);
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['first begins', 'first commits', 'second has read']);
      expect(seenBySecond?.reference).toBe('INQ-LOCK01'); // its first statement already saw the first's commit

      const refused = store.transaction(
        async (tx) => {
          await store.inquiries.insertMany([{ inquiry: inquiry('INQ-LOCK02'), fingerprint: 'fp-lock-2' }], tx);
          throw new Error('refused');
        },
        { lock: ['a name'] },
      );
      await expect(refused).rejects.toThrow('refused');
      expect(await store.inquiries.findByReference('INQ-LOCK02')).toBeUndefined();
      // The lock was let go and the connection is fit for use again.
      await store.transaction((tx) => store.inquiries.insertMany([{ inquiry: inquiry('INQ-LOCK03'), fingerprint: 'fp-lock-3' }], tx), {
        lock: ['a name'],
      });
      expect(await store.inquiries.findByReference('INQ-LOCK03')).toBeDefined();
    });

    it('run what is handed to afterCommit once they have committed, in order, and never after a rollback', async () => {
      await openTempStore();
      const events: string[] = [];
      // The COMMIT as the drivers send it, in the same record as the callbacks.
      const noteCommit = (statement: unknown) => {
        if (typeof statement === 'string' && statement.trim().toLowerCase() === 'commit') events.push('COMMIT');
      };
      const query = pg.Client.prototype.query;
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
        noteCommit(args[0]);
        return (query as (...a: unknown[]) => unknown).apply(this, args) as never;
      });
      // SQLite statements are kept prepared (src/storage/database.ts): note the run, not the prepare.
      const probe = new SQLite(':memory:');
      const statements = Object.getPrototypeOf(probe.prepare('select 1')) as SQLite.Statement;
      probe.close();
      const run = statements.run;
      vi.spyOn(statements, 'run').mockImplementation(function (this: SQLite.Statement, ...args: unknown[]) {
        noteCommit(this.source);
        return run.apply(this, args);
      });
      const seenFromOutside: Promise<InquiryRecord | undefined>[] = [];
      const kinds = [{}, { lock: ['a name'] }, { durable: false }] as const;
      for (const [index, options] of kinds.entries()) {
        const reference = `INQ-AFTER${index}`;
        await store.transaction(async (tx) => {
          store.afterCommit(tx, () => {
            events.push(`${reference} first`);
            seenFromOutside.push(store.inquiries.findByReference(reference));
          });
          store.afterCommit(tx, () => events.push(`${reference} second`));
          await store.inquiries.insertMany([{ inquiry: inquiry(reference), fingerprint: `fp-${reference}` }], tx);
          events.push(`${reference} work done`);
        }, options);
        expect(events.splice(0)).toEqual([`${reference} work done`, 'COMMIT', `${reference} first`, `${reference} second`]);
      }
      expect((await Promise.all(seenFromOutside)).map((found) => found?.reference)).toEqual(['INQ-AFTER0', 'INQ-AFTER1', 'INQ-AFTER2']);

      const refused = store.transaction(async (tx) => {
        store.afterCommit(tx, () => events.push('after a rollback'));
        throw new Error('refused');
      });
      await expect(refused).rejects.toThrow('refused');
      expect(events).toEqual([]);
      vi.restoreAllMocks();
      expect(() => store.afterCommit({} as Tx, () => {})).toThrow('afterCommit takes a transaction of store.transaction, while it is open');
      let finished: Tx | undefined;
      await store.transaction(async (tx) => {
        finished = tx;
      });
      expect(() => store.afterCommit(finished as Tx, () => {})).toThrow('while it is open');
    });
  });

  describe('outbox', () => {
    it('leases due deliveries once, hands them back after the lease, and records attempts', async () => {
      await openTempStore();
      const now = new Date('2026-01-01T00:00:00Z');
      await store.transaction(async (tx) => {
        await store.inquiries.insertMany([{ inquiry: inquiry('INQ-AAAAAA', now), fingerprint: 'fp-a' }], tx);
        await store.outbox.enqueue(['INQ-AAAAAA'], ['email', 'webhook'], now, tx);
      });
      const claimed = await store.outbox.claimDue(now, 10, 60_000, 'worker-a');
      expect(claimed.map((c) => c.delivery.channel).sort()).toEqual(['email', 'webhook']);
      expect(claimed[0]?.payload).toMatchObject({ kind: 'inquiry', inquiry: { reference: 'INQ-AAAAAA' } });
      expect(await store.outbox.claimDue(now, 10, 60_000, 'worker-b')).toEqual([]);
      // After the lease ends, another worker's claim gets them back (a crashed worker's deliveries return).
      const takenOver = await store.outbox.claimDue(new Date(now.getTime() + 60_000), 10, 60_000, 'worker-b');
      expect(takenOver).toHaveLength(2);

      const email = claimed.find((c) => c.delivery.channel === 'email')?.delivery.id ?? '';
      const later = new Date(now.getTime() + 5_000);
      const retry = {
        deliveryId: email,
        attempts: 0,
        attempt: { attemptedAt: now, outcome: 'retry', error: 'down', durationMs: 3.7 },
        result: { outcome: 'retry', error: 'down', runAt: later },
      } as const;
      // The first worker, taken over since, records nothing; the second does, once: the same write
      // again (a retry after an unacknowledged commit) finds the lease released.
      expect(await store.outbox.recordAttempt({ ...retry, owner: 'worker-a' })).toBe(false);
      expect(await store.outbox.recordAttempt({ ...retry, owner: 'worker-b' })).toBe(true);
      expect(await store.outbox.recordAttempt({ ...retry, owner: 'worker-b' })).toBe(false);
      expect(await store.outbox.claimDue(now, 10, 60_000, 'worker-a')).toEqual([]); // the email is not due yet, the webhook leased
      expect((await store.outbox.claimDue(later, 10, 60_000, 'worker-a')).map((c) => c.delivery.channel)).toEqual(['email']);
      // Leased to worker-a again, but an attempt has been recorded since: its old write is refused.
      expect(await store.outbox.recordAttempt({ ...retry, owner: 'worker-a' })).toBe(false);
      await store.outbox.releaseLeases();
      const retried = await store.outbox.claimDue(later, 10, 60_000, 'worker-c');
      // A worker's claim that finds its own lease again keeps it (a slow send, recorded later).
      expect(await store.outbox.claimDue(new Date(later.getTime() + 60_000), 10, 60_000, 'worker-c')).toHaveLength(2);
      expect(retried.map((c) => c.delivery.channel).sort()).toEqual(['email', 'webhook']);
      await store.outbox.recordAttempt({
        deliveryId: email,
        owner: 'worker-c',
        attempts: 1,
        attempt: { attemptedAt: later, outcome: 'failed', error: '550', durationMs: 2.25 },
        result: { outcome: 'failed', error: '550' },
      });
      const [record] = (await store.outbox.forReference('INQ-AAAAAA')).filter((d) => d.channel === 'email');
      expect(record).toMatchObject({ status: 'failed', attempts: 2, lastError: '550' });
      expect((await store.outbox.attempts(email)).map((a) => [a.attempt, a.outcome, a.error])).toEqual([
        [1, 'retry', 'down'],
        [2, 'failed', '550'],
      ]);
      expect(await store.outbox.countByStatus()).toEqual({ pending: 1, succeeded: 0, failed: 1, dead: 0 });

      expect(await store.outbox.requeue(later)).toBe(1);
      expect((await store.outbox.forReference('INQ-AAAAAA')).map((d) => d.status)).toEqual(['pending', 'pending']);
    });
    it("records an attempt whose error text holds NUL (a receiver's reply), with U+FFFD in its place", async () => {
      await openTempStore();
      const now = new Date('2026-01-01T00:00:00Z');
      await store.transaction(async (tx) => {
        await store.inquiries.insertMany([{ inquiry: inquiry('INQ-NNNNNN', now), fingerprint: 'fp-n' }], tx);
        await store.outbox.enqueue(['INQ-NNNNNN'], ['webhook'], now, tx);
      });
      const [claimed] = await store.outbox.claimDue(now, 10, 60_000, 'worker-a');
      const id = claimed?.delivery.id ?? '';
      const error = 'HTTP 500: bad\u0000gateway';
      const recorded = await store.outbox.recordAttempt({
        deliveryId: id,
        owner: 'worker-a',
        attempts: 0,
        attempt: { attemptedAt: now, outcome: 'retry', error, durationMs: 1 },
        result: { outcome: 'retry', error, runAt: new Date(now.getTime() + 5_000) },
      });
      expect(recorded).toBe(true);
      expect((await store.outbox.forReference('INQ-NNNNNN'))[0]).toMatchObject({ attempts: 1, lastError: 'HTTP 500: bad\ufffdgateway' });
      expect((await store.outbox.attempts(id)).map((a) => a.error)).toEqual(['HTTP 500: bad\ufffdgateway']);
    });

    /**
     * A store on a fresh database with two chunks of a requeue and `extra` inquiries received at
     * `now`, each with a delivery on `channel`.
     */
    async function withBacklog(extra: number, channel: string, now: Date) {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const size = 2 * ACROSS_PROCESSES[database.config.kind].rows + extra;
      const references = Array.from({ length: size }, (_, index) => `INQ-R${String(index).padStart(5, '0')}`);
      await queueInquiries(references, [channel], now);
      return { opened, size };
    }

    it('re-queues a backlog larger than a chunk in chunks, every failed and dead inquiry delivery and no service mail', async () => {
      const now = new Date('2026-01-01T00:00:00Z');
      const { opened, size } = await withBacklog(7, 'email', now);
      await store.outbox.enqueueMessage({ id: 'm-dead', to: 'person@example.com', subject: 'Code', body: 'code 1' }, 'email', now);
      // Half failed, half dead, one left pending; the service mail dead too.
      await opened.db.updateTable('deliveries').set({ status: 'failed' }).where('reference', '<', 'INQ-R00500').execute();
      await opened.db.updateTable('deliveries').set({ status: 'dead' }).where('reference', '>=', 'INQ-R00500').execute();
      await opened.db.updateTable('deliveries').set({ status: 'pending' }).where('reference', '=', 'INQ-R00000').execute();
      await opened.db.updateTable('deliveries').set({ status: 'dead' }).where('message_id', '=', 'm-dead').execute();
      const later = new Date(now.getTime() + 1_000);
      expect(await store.outbox.requeue(later)).toBe(size - 1);
      expect(await store.outbox.countByStatus()).toEqual({ pending: size, succeeded: 0, failed: 0, dead: 1 });
      expect(await store.outbox.requeue(later)).toBe(0);
    });

    it('re-queues each failed delivery once, even one that fails again while the requeue goes on', async () => {
      const now = new Date('2026-01-01T00:00:00Z');
      const { opened, size } = await withBacklog(500, 'webhook', now);
      await opened.db.updateTable('deliveries').set({ status: 'failed' }).execute();
      // A receiver that refuses everything: what the requeue puts back fails again at once (here,
      // between its chunks), as a worker would make it. Bounded, so that a requeue that took those
      // again and again ends the test rather than hangs it.
      let requeued: number | undefined;
      const requeue = store.outbox.requeue(new Date(now.getTime() + 1_000)).then((count) => {
        requeued = count;
      });
      for (let round = 0; round < 50 && requeued === undefined; round++) {
        await opened.db.updateTable('deliveries').set({ status: 'failed' }).where('status', '=', 'pending').execute();
        await sleep(10);
      }
      await requeue;
      expect(requeued).toBe(size);
    });

    it('purges expired idempotency keys beyond a chunk, and only those', async () => {
      await openTempStore();
      const now = new Date('2026-01-02T00:00:00Z');
      const expiredAt = new Date(now.getTime() - 25 * 3_600_000);
      const expired = 2 * IN_PROCESS.rows + 3;
      const references = Array.from({ length: expired + 5 }, (_, index) => `INQ-K${String(index).padStart(5, '0')}`);
      await store.inquiries.insertMany(references.map((reference) => ({ inquiry: inquiry(reference, now), fingerprint: reference })));
      await store.idempotency.insertMany(
        references.map((reference, index) => ({
          key: `key-${reference}`,
          requestHash: 'h',
          reference,
          createdAt: index < expired ? expiredAt : now,
          outcome: 'created' as const,
        })),
      );
      expect(await store.idempotency.deleteOlderThan(new Date(now.getTime() - 24 * 3_600_000))).toBe(expired);
      const left = await store.idempotency.findMany(references.map((reference) => `key-${reference}`));
      expect([...left.keys()].sort()).toEqual(references.slice(expired).map((reference) => `key-${reference}`));
    });

    it('records a batch of attempts: successes together, others one by one, numbered per delivery', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const now = new Date('2026-01-01T00:00:00Z');
      const references = ['INQ-DDDDD1', 'INQ-DDDDD2', 'INQ-DDDDD3'];
      await queueInquiries(references, ['email'], now);
      await store.outbox.enqueueMessage({ id: 'm2', to: 'person@example.com', subject: 'Code', body: 'code 654321' }, 'email', now);
      const claimed = await store.outbox.claimDue(now, 10, 60_000, 'worker');
      const idOf = (reference: string | null) => claimed.find((c) => c.delivery.reference === reference)?.delivery.id ?? '';
      const later = new Date(now.getTime() + 60_000);
      const ok = (deliveryId: string, durationMs: number) => ({
        deliveryId,
        owner: 'worker',
        attempts: 0,
        attempt: { attemptedAt: now, outcome: 'succeeded' as const, error: null, durationMs },
        result: { outcome: 'succeeded' as const },
      });
      const batch: AttemptRecord[] = [
        ok(idOf('INQ-DDDDD1'), 12),
        {
          deliveryId: idOf('INQ-DDDDD2'),
          owner: 'worker',
          attempts: 0,
          attempt: { attemptedAt: now, outcome: 'retry', error: 'busy', durationMs: 5 },
          result: { outcome: 'retry', error: 'busy', runAt: later },
        },
        ok(idOf('INQ-DDDDD3'), 40),
        ok(idOf(null), 7),
      ];
      expect(await store.transaction((tx) => store.outbox.recordAttempts(batch, tx))).toEqual([true, true, true, true]);
      // Written again (a retry after an unacknowledged commit): the leases are gone, nothing changes.
      expect(await store.transaction((tx) => store.outbox.recordAttempts(batch, tx))).toEqual([false, false, false, false]);
      const records = await store.outbox.forReferences(references);
      expect(records.map((d) => [d.reference, d.status, d.attempts, d.lastError]).sort()).toEqual([
        ['INQ-DDDDD1', 'succeeded', 1, null],
        ['INQ-DDDDD2', 'pending', 1, 'busy'],
        ['INQ-DDDDD3', 'succeeded', 1, null],
      ]);
      expect(records.find((d) => d.reference === 'INQ-DDDDD1')?.finishedAt?.getTime()).toBe(now.getTime() + 40);
      expect(await store.outbox.attempts(idOf('INQ-DDDDD3'))).toEqual([
        { attempt: 1, attemptedAt: now, outcome: 'succeeded', error: null, durationMs: 40 },
      ]);
      expect(await store.outbox.countByStatus()).toEqual({ pending: 1, succeeded: 3, failed: 0, dead: 0 });
      // The delivered service message keeps its envelope, not its code.
      expect(await opened.db.selectFrom('messages').select(['to_address', 'body']).where('id', '=', 'm2').executeTakeFirst()).toEqual({
        to_address: 'person@example.com',
        body: '',
      });
      // The leases are released: only the retry comes back, when it is due.
      expect((await store.outbox.claimDue(later, 10, 60_000, 'worker')).map((c) => c.delivery.reference)).toEqual(['INQ-DDDDD2']);
    });

    /** Deliveries by channel and status as the rows say, sorted: what countByChannelAndStatus must report. */
    async function countedRows(db: Kysely<Database>) {
      const rows = await db
        .selectFrom('deliveries')
        .select(['channel', 'status', (eb) => eb.fn.countAll<number>().as('count')])
        .groupBy(['channel', 'status'])
        .execute();
      return rows.map((row) => `${row.channel} ${row.status} ${Number(row.count)}`).sort();
    }
    const reported = async () =>
      (await store.outbox.countByChannelAndStatus())
        .filter(({ count }) => count > 0)
        .map(({ channel, status, count }) => `${channel} ${status} ${count}`)
        .sort();

    it('count deliveries by channel and status as the rows say, successes from the counts kept where each is recorded', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const outcomes = fc.constantFrom('succeeded', 'retry', 'failed', 'dead', 'unrecorded' as const);
      let round = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(outcomes, outcomes), { minLength: 1, maxLength: 6 }),
          fc.boolean(),
          async (perInquiry, requeue) => {
            round += 1;
            // Each round a minute later: every lease of the round before has run out, every retry is due.
            const now = new Date(Date.UTC(2026, 0, 1) + round * 60_000);
            const references = perInquiry.map((_, index) => `INQ-P${String(round).padStart(3, '0')}${index}`);
            await store.transaction(async (tx) => {
              await store.inquiries.insertMany(
                references.map((reference) => ({ inquiry: inquiry(reference, now), fingerprint: reference })),
                tx,
              );
              await store.outbox.enqueue(references, ['email', 'webhook'], now, tx);
            });
            const claimed = await store.outbox.claimDue(now, 1_000, 1_000, 'worker');
            const outcomeOf = new Map(
              references.flatMap((reference, index) => {
                const [email, webhook] = perInquiry[index] ?? [];
                return [
                  [`${reference} email`, email],
                  [`${reference} webhook`, webhook],
                ];
              }),
            );
            const records = claimed.flatMap(({ delivery }): AttemptRecord[] => {
              // Deliveries of earlier rounds, retried or never recorded, succeed now.
              const outcome = outcomeOf.get(`${delivery.reference} ${delivery.channel}`) ?? 'succeeded';
              const attempt = { attemptedAt: now, error: null, durationMs: 1 };
              const base = { deliveryId: delivery.id, owner: 'worker', attempts: delivery.attempts };
              if (outcome === 'unrecorded') return [];
              if (outcome === 'succeeded') return [{ ...base, attempt: { ...attempt, outcome }, result: { outcome } }];
              if (outcome === 'retry')
                return [{ ...base, attempt: { ...attempt, outcome }, result: { outcome, error: 'busy', runAt: now } }];
              return [{ ...base, attempt: { ...attempt, outcome: 'failed' }, result: { outcome, error: 'refused' } }];
            });
            expect(new Set(await store.transaction((tx) => store.outbox.recordAttempts(records, tx)))).toEqual(
              new Set(records.length ? [true] : []),
            );
            // Recorded again (a retry after a commit whose answer was lost): refused, counted once.
            await store.transaction((tx) => store.outbox.recordAttempts(records, tx));
            if (requeue) await store.outbox.requeue(now);
            expect(await reported()).toEqual(await countedRows(opened.db));
          },
        ),
        { numRuns: 25 },
      );
    });

    it('count the successes recorded before the counts were kept, once, on upgrading', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const now = new Date('2026-01-01T00:00:00Z');
      const references = ['INQ-UUUUU1', 'INQ-UUUUU2', 'INQ-UUUUU3'];
      await queueInquiries(references, ['email', 'webhook'], now);
      // The database as an older release left it: migrated up to 007, some deliveries done.
      await opened.db.updateTable('deliveries').set({ status: 'succeeded' }).where('reference', '!=', 'INQ-UUUUU3').execute();
      await opened.db
        .updateTable('deliveries')
        .set({ status: 'dead' })
        .where('reference', '=', 'INQ-UUUUU3')
        .where('channel', '=', 'email')
        .execute();
      await store.close();
      const older = await openDatabase(database.config);
      await sql`drop table delivery_successes`.execute(older.db);
      await sql`alter table idempotency_keys drop column outcome`.execute(older.db);
      await sql`drop index deliveries_due_by_channel`.execute(older.db);
      await sql`drop index deliveries_due_messages_by_channel`.execute(older.db);
      await sql`delete from kysely_migration where name >= '008'`.execute(older.db);
      await older.db.destroy();

      const upgraded = await openDatabase(database.config);
      store = createStore(upgraded);
      expect(await reported()).toEqual(['email dead 1', 'email succeeded 2', 'webhook pending 1', 'webhook succeeded 2']);
      // Opened again, nothing is counted twice.
      await store.close();
      store = createStore(await openDatabase(database.config));
      expect(await reported()).toEqual(['email dead 1', 'email succeeded 2', 'webhook pending 1', 'webhook succeeded 2']);
    });

    it('applies an upgrade whole or not at all: one that fails partway leaves the database as it was, and the next start applies it', async () => {
      database = await fresh();
      await (await openDatabase(database.config)).db.destroy();
      // The database as a release before 008 left it, with its deliveries table out of reach, so
      // that 008 fails after its first statement (the table it creates) and before its record.
      const older = await openExistingDatabase(database.config);
      await sql`drop table delivery_successes`.execute(older.db);
      await sql`alter table idempotency_keys drop column outcome`.execute(older.db);
      await sql`drop index deliveries_due_by_channel`.execute(older.db);
      await sql`drop index deliveries_due_messages_by_channel`.execute(older.db);
      await sql`delete from kysely_migration where name >= '008'`.execute(older.db);
      await sql`alter table deliveries rename to deliveries_away`.execute(older.db);
      await older.db.destroy();
      await expect(openDatabase(database.config)).rejects.toThrow('database migration 008_delivery_success_counts failed');

      const kept = await openExistingDatabase(database.config);
      expect((await readSchemaVersion(kept.db as unknown as Kysely<unknown>)).applied.filter((name) => name >= '008')).toEqual([]);
      await sql`alter table deliveries_away rename to deliveries`.execute(kept.db);
      await kept.db.destroy();
      const upgraded = await openDatabase(database.config);
      store = createStore(upgraded);
      expect((await readSchemaVersion(upgraded.db as unknown as Kysely<unknown>)).applied.filter((name) => name >= '008')).toEqual([
        '008_delivery_success_counts',
        '009_idempotency_key_outcome',
        '010_deliveries_due_by_channel',
        '011_service_messages_due_by_channel',
      ]);
      expect(await store.outbox.countByStatus()).toEqual({ pending: 0, succeeded: 0, failed: 0, dead: 0 });
    });

    it('commits a non-durable transaction, and later transactions are durable again', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const durability = async () =>
        database.config.kind === 'sqlite'
          ? String((await sql<{ synchronous: number }>`pragma synchronous`.execute(opened.db)).rows[0]?.synchronous)
          : String((await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(opened.db)).rows[0]?.synchronous_commit);
      const durable = database.config.kind === 'sqlite' ? '2' : 'on'; // 2 is FULL
      expect(await durability()).toBe(durable);
      // Inside: SQLite syncs less (NORMAL, 1); PostgreSQL commits durably all the same.
      const inside = await store.transaction(
        async (tx) => {
          await store.inquiries.insertMany([{ inquiry: inquiry('INQ-EEEEEE'), fingerprint: 'fp-e' }], tx);
          return database.config.kind === 'sqlite'
            ? String(
                (await sql<{ synchronous: number }>`pragma synchronous`.execute(tx as unknown as Kysely<unknown>)).rows[0]?.synchronous,
              )
            : String(
                (await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(tx as unknown as Kysely<unknown>)).rows[0]
                  ?.synchronous_commit,
              );
        },
        { durable: false },
      );
      expect(inside).toBe(database.config.kind === 'sqlite' ? '1' : 'on');
      await expect(
        store.transaction(
          async () => {
            throw new Error('rolled back');
          },
          { durable: false },
        ),
      ).rejects.toThrow('rolled back');
      expect(await durability()).toBe(durable);
      expect(await store.inquiries.findByReference('INQ-EEEEEE')).toMatchObject({ reference: 'INQ-EEEEEE' });
    });
  });

  describe('claims per channel', () => {
    it('take up to the number given for each channel named, and leave the other channels alone', async () => {
      await openTempStore();
      const earlier = new Date('2026-01-01T00:00:00Z');
      const now = new Date(earlier.getTime() + 60_000);
      const references = ['INQ-CCCCC1', 'INQ-CCCCC2', 'INQ-CCCCC3'];
      await store.transaction(async (tx) => {
        await store.inquiries.insertMany(
          references.map((reference, i) => ({ inquiry: inquiry(reference, earlier), fingerprint: `fp-c-${i}` })),
          tx,
        );
        await store.outbox.enqueue(references, ['email', 'webhook', 'other'], earlier, tx);
      });
      await store.outbox.enqueueMessage({ id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' }, 'email', now);
      const claimed = await store.outbox.claimDue(
        now,
        new Map([
          ['email', 2],
          ['webhook', 10],
          ['nothing', 5],
        ]),
        60_000,
        'worker',
      );
      const of = (channel: string) => claimed.filter((due) => due.delivery.channel === channel);
      expect(of('email').map((due) => due.payload.kind)).toEqual(['message', 'inquiry']); // the code first, within its channel
      expect(of('webhook')).toHaveLength(3);
      expect(of('other')).toEqual([]);
      const rest = await store.outbox.claimDue(now, new Map([['email', 10]]), 60_000, 'worker');
      expect(rest.map((due) => due.delivery.channel)).toEqual(['email', 'email']);
      expect((await store.outbox.claimDue(now, 10, 60_000, 'worker')).map((due) => due.delivery.channel)).toEqual([
        'other',
        'other',
        'other',
      ]);
    });
  });

  describe('service messages', () => {
    it('are claimed ahead of older inquiry mail (a person waits for the code), which then follows oldest first', async () => {
      await openTempStore();
      const earlier = new Date('2026-01-01T00:00:00Z');
      const now = new Date(earlier.getTime() + 60_000);
      await store.transaction(async (tx) => {
        const references = ['INQ-AAAAA1', 'INQ-AAAAA2', 'INQ-AAAAA3'];
        await store.inquiries.insertMany(
          references.map((reference, i) => ({ inquiry: inquiry(reference, earlier), fingerprint: `fp-${i}` })),
          tx,
        );
        await store.outbox.enqueue(references, ['email'], earlier, tx);
      });
      await store.outbox.enqueueMessage({ id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' }, 'email', now);
      const first = await store.outbox.claimDue(now, 2, 60_000, 'worker');
      expect(first.map((due) => due.payload.kind)).toEqual(['message', 'inquiry']);
      const rest = await store.outbox.claimDue(now, 10, 60_000, 'worker');
      expect(rest.map((due) => due.payload.kind)).toEqual(['inquiry', 'inquiry']);
      const references = [...first, ...rest].flatMap((due) => (due.payload.kind === 'inquiry' ? [due.payload.inquiry.reference] : []));
      expect(references.sort()).toEqual(['INQ-AAAAA1', 'INQ-AAAAA2', 'INQ-AAAAA3']);
      expect(await store.outbox.claimDue(now, 10, 60_000, 'worker')).toEqual([]);
    });

    it("of one channel are found through their own small index, never by walking that channel's inquiry backlog", async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const now = new Date('2026-01-01T00:00:00Z');
      const references = Array.from({ length: 2_000 }, (_, i) => `INQ-B${String(i).padStart(5, '0')}`);
      await queueInquiries(references, ['email'], now);
      await store.outbox.enqueueMessage({ id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' }, 'email', now);
      // The plan of the claim's own query (the one claimDue runs) for a channel's service messages,
      // as the service finds it: it never runs ANALYZE.
      const query = dueDeliveries(opened.db, { at: now.getTime(), count: 5, messagesOnly: true, channel: 'email' }).compile();
      const explain = database.config.kind === 'sqlite' ? 'explain query plan' : 'explain';
      const { rows } = await opened.db.executeQuery(CompiledQuery.raw(`${explain} ${query.sql}`, [...query.parameters]));
      expect(JSON.stringify(rows)).toContain('deliveries_due_messages_by_channel');
    });

    it('are claimed once by one claim, the two halves of a claim being disjoint whatever the lease', async () => {
      await openTempStore();
      const now = new Date('2026-01-01T00:00:00Z');
      await store.outbox.enqueueMessage({ id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' }, 'email', now);
      const claimed = await store.outbox.claimDue(now, 5, 0, 'worker');
      expect(claimed.map((due) => due.payload.kind)).toEqual(['message']);
    });

    it('go through the outbox, and lose their body once delivered', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const now = new Date();
      await store.outbox.enqueueMessage({ id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' }, 'email', now);
      const [due] = await store.outbox.claimDue(now, 10, 60_000, 'worker');
      expect(due?.payload).toEqual({
        kind: 'message',
        message: { id: 'm1', to: 'person@example.com', subject: 'Your code', body: 'code 123456' },
      });
      expect(due?.delivery.reference).toBeNull();
      await store.outbox.recordAttempt({
        deliveryId: due?.delivery.id ?? '',
        owner: 'worker',
        attempts: 0,
        attempt: { attemptedAt: now, outcome: 'succeeded', error: null, durationMs: 1 },
        result: { outcome: 'succeeded' },
      });
      const row = await opened.db.selectFrom('messages').selectAll().where('id', '=', 'm1').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ to_address: 'person@example.com', subject: 'Your code', body: '' });
    });
  });

  describe('inquiries', () => {
    it('refuse a second inquiry with a taken reference, inserting the others', async () => {
      await openTempStore();
      const one = (reference: string) => ({ inquiry: inquiry(reference), fingerprint: reference });
      expect(await store.inquiries.insertMany([one('INQ-BBBBBB')])).toEqual(new Set(['INQ-BBBBBB']));
      expect(await store.inquiries.insertMany([one('INQ-BBBBBB'), one('INQ-BBBBBC')])).toEqual(new Set(['INQ-BBBBBC']));
    });

    it('find a recent one by fingerprint, not an old one', async () => {
      await openTempStore();
      await store.inquiries.insertMany([
        { inquiry: inquiry('INQ-CCCCCC', new Date('2026-01-01T00:00:00Z')), fingerprint: 'same' },
        { inquiry: inquiry('INQ-CCCCCD', new Date('2026-01-01T00:00:05Z')), fingerprint: 'same' },
      ]);
      const at = (iso: string) => store.inquiries.findRecentByFingerprints(['same', 'other'], new Date(iso));
      expect(await at('2026-01-01T00:00:00Z')).toEqual(new Map([['same', 'INQ-CCCCCC']]));
      expect(await at('2026-01-01T00:00:01Z')).toEqual(new Map([['same', 'INQ-CCCCCD']]));
      expect(await at('2026-01-01T00:00:06Z')).toEqual(new Map());
    });

    it('find, of those received in the same millisecond, the one whose reference sorts first, whatever the order written', async () => {
      await openTempStore();
      const same = new Date('2026-01-01T00:00:00Z');
      await store.inquiries.insertMany([
        { inquiry: inquiry('INQ-TTTTTB', same), fingerprint: 'tie' },
        { inquiry: inquiry('INQ-TTTTTA', same), fingerprint: 'tie' },
        { inquiry: inquiry('INQ-TTTTTC', same), fingerprint: 'tie' },
      ]);
      await store.inquiries.insertMany([{ inquiry: inquiry('INQ-TTTTT0', new Date(same.getTime() + 1)), fingerprint: 'tie' }]);
      expect(await store.inquiries.findRecentByFingerprints(['tie'], same)).toEqual(new Map([['tie', 'INQ-TTTTTA']]));
    });

    it('keep any text as it was given, in a batch of any size, and find it again by reference, fingerprint and key', async () => {
      await openTempStore();
      // Quotes, backslashes, braces, commas and "NULL" are what an array literal has to escape.
      const text = fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }).map((value) => value.replaceAll('\u0000', '')),
        fc.constantFrom('"', '\\', '{}', '{"a","b"}', ',', 'NULL', 'null', ' ', "'; drop table inquiries; --"),
      );
      let serial = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ firstName: text, message: text, company: fc.option(text), clientId: fc.option(text) }), {
            minLength: 1,
            maxLength: 12,
          }),
          async (fields) => {
            const batch = fields.map(({ firstName, message, company, clientId }) => {
              const reference = `INQ-P${String(++serial).padStart(5, '0')}`;
              return { inquiry: { ...inquiry(reference), firstName, message, company, clientId }, fingerprint: `fp ${message} ${serial}` };
            });
            const references = batch.map(({ inquiry }) => inquiry.reference);
            expect(await store.inquiries.insertMany(batch)).toEqual(new Set(references));
            // Again, beside a new one: only the new one is inserted, and the first ones stay as they were.
            const another = { inquiry: inquiry(`INQ-P${String(++serial).padStart(5, '0')}`), fingerprint: `fp another ${serial}` };
            const again = batch.map(({ inquiry, fingerprint }) => ({ inquiry: { ...inquiry, message: 'overwritten?' }, fingerprint }));
            expect(await store.inquiries.insertMany([...again, another])).toEqual(new Set([another.inquiry.reference]));
            for (const { inquiry: stored } of batch) expect(await store.inquiries.findByReference(stored.reference)).toEqual(stored);
            expect(await store.inquiries.takenReferences([...references, 'INQ-ZZZZZZ'])).toEqual(new Set(references));
            const found = await store.inquiries.findRecentByFingerprints(
              batch.map(({ fingerprint }) => fingerprint),
              new Date(0),
            );
            expect(found).toEqual(new Map(batch.map(({ inquiry, fingerprint }) => [fingerprint, inquiry.reference])));
            const keys = batch.map(({ inquiry }, index) => ({
              key: `${inquiry.reference} ${inquiry.message}`,
              requestHash: inquiry.firstName,
              reference: inquiry.reference,
              createdAt: inquiry.receivedAt,
              outcome: index % 2 === 0 ? ('created' as const) : ('duplicate' as const),
            }));
            await store.idempotency.insertMany(keys);
            expect(await store.idempotency.findMany(keys.map(({ key }) => key))).toEqual(new Map(keys.map((key) => [key.key, key])));
            await store.outbox.enqueue(references, ['email', 'webhook'], new Date());
            expect((await store.outbox.forReferences(references)).length).toBe(2 * references.length);
          },
        ),
        { numRuns: 25 },
      );
    });

    it("find, for an intake batch, the stored keys, each fingerprint's earliest recent inquiry (of equal times the first reference) and the taken references", async () => {
      await openTempStore();
      let run = 0;
      const base = Date.parse('2026-01-01T00:00:00Z');
      // Few fingerprints and times, so that folds, ties and the window's edge all come up.
      const stored = fc.uniqueArray(
        fc.record({
          suffix: fc.stringMatching(/^[0-9A-Z]{4}$/),
          fingerprint: fc.integer({ min: 0, max: 3 }),
          at: fc.integer({ min: 0, max: 4 }),
        }),
        { selector: (row) => row.suffix, maxLength: 10 },
      );
      await fc.assert(
        fc.asyncProperty(stored, fc.array(fc.boolean(), { maxLength: 10 }), fc.integer({ min: 0, max: 5 }), async (rows, keyed, since) => {
          run++;
          const inquiries = rows.map(({ suffix, fingerprint, at }) => ({
            inquiry: inquiry(`INQ-${run}${suffix}`, new Date(base + at)),
            fingerprint: `fp ${run} ${fingerprint}`,
          }));
          const keys = inquiries
            .filter((_, index) => keyed[index])
            .map(({ inquiry: { reference, receivedAt } }) => ({
              key: `key ${reference}`,
              requestHash: `hash ${reference}`,
              reference,
              createdAt: receivedAt,
              outcome: 'created' as const,
            }));
          await store.inquiries.insertMany(inquiries);
          await store.idempotency.insertMany(keys);
          const references = [...inquiries.map(({ inquiry }) => inquiry.reference), `INQ-${run}NONE`];
          const facts = await store.transaction((tx) =>
            store.intake.lookup(
              {
                keys: [...inquiries.map(({ inquiry }) => `key ${inquiry.reference}`), `key of ${run}`],
                fingerprints: [0, 1, 2, 3, 4].map((fingerprint) => `fp ${run} ${fingerprint}`),
                since: new Date(base + since),
                references,
              },
              tx,
            ),
          );
          const recent = new Map<string, { reference: string; at: number }>();
          for (const { inquiry, fingerprint } of inquiries) {
            const at = inquiry.receivedAt.getTime();
            const earliest = recent.get(fingerprint);
            if (at < base + since) continue;
            if (!earliest || at < earliest.at || (at === earliest.at && inquiry.reference < earliest.reference)) {
              recent.set(fingerprint, { reference: inquiry.reference, at });
            }
          }
          expect(facts).toEqual({
            keys: new Map(keys.map((key) => [key.key, key])),
            recent: new Map([...recent].map(([fingerprint, { reference }]) => [fingerprint, reference])),
            taken: new Set(references.slice(0, -1)),
          });
        }),
        { numRuns: 40 },
      );
    });

    it("write an intake batch's inquiries, a delivery for each channel and its keys, all or nothing; one whose reference is taken is not written", async () => {
      await openTempStore();
      await store.inquiries.insertMany([{ inquiry: { ...inquiry('INQ-TAKEN0'), message: 'the first' }, fingerprint: 'fp-first' }]);
      const now = new Date('2026-01-01T00:00:00Z');
      const batch = ['INQ-WRITE0', 'INQ-TAKEN0', 'INQ-WRITE1'].map((reference) => ({
        inquiry: inquiry(reference, now),
        fingerprint: `fp-${reference}`,
      }));
      const keys = [{ key: 'key-0', requestHash: 'hash-0', reference: 'INQ-WRITE0', createdAt: now, outcome: 'created' as const }];
      const written = (writes: Omit<IntakeWrites, 'now'>) => store.transaction((tx) => store.intake.write({ ...writes, now }, tx));
      expect(await written({ inquiries: batch, channels: ['email', 'webhook'], keys })).toEqual(new Set(['INQ-WRITE0', 'INQ-WRITE1']));
      expect(await store.inquiries.findByReference('INQ-WRITE1')).toEqual(batch[2]?.inquiry);
      expect((await store.inquiries.findByReference('INQ-TAKEN0'))?.message).toBe('the first');
      const deliveries = await store.outbox.forReferences(['INQ-WRITE0', 'INQ-WRITE1']);
      expect(deliveries.map(({ reference, channel, status }) => `${reference} ${channel} ${status}`).sort()).toEqual([
        'INQ-WRITE0 email pending',
        'INQ-WRITE0 webhook pending',
        'INQ-WRITE1 email pending',
        'INQ-WRITE1 webhook pending',
      ]);
      expect(await store.idempotency.findMany(['key-0'])).toEqual(new Map([['key-0', keys[0]]]));
      // Only keys (every submission a replay or a fold): nothing else is written. Nothing at all: no statement.
      const replay = { key: 'key-1', requestHash: 'hash-1', reference: 'INQ-WRITE1', createdAt: now, outcome: 'duplicate' as const };
      expect(await written({ inquiries: [], channels: ['email'], keys: [replay] })).toEqual(new Set());
      expect((await store.idempotency.findMany(['key-1'])).get('key-1')).toEqual(replay);
      expect(await written({ inquiries: [], channels: ['email'], keys: [] })).toEqual(new Set());
      // A key that clashes fails the whole write: its inquiry is not stored either.
      await expect(
        written({
          inquiries: [{ inquiry: inquiry('INQ-WRITE2', now), fingerprint: 'fp-2' }],
          channels: ['email'],
          keys: [{ ...replay, reference: 'INQ-WRITE2' }],
        }),
      ).rejects.toThrow();
      expect(await store.inquiries.findByReference('INQ-WRITE2')).toBeUndefined();
      expect(await store.outbox.forReferences(['INQ-WRITE2'])).toEqual([]);
    });

    it('read a key stored before its outcome was kept (migration 009) as one whose request created its inquiry', async () => {
      await openTempStore();
      const now = new Date('2026-01-01T00:00:00Z');
      await store.inquiries.insertMany([{ inquiry: inquiry('INQ-OLDKEY', now), fingerprint: 'fp-old' }]);
      const opened = await openDatabase(database.config);
      await sql`insert into idempotency_keys (key, request_hash, reference, created_at) values ('old-key', 'h', 'INQ-OLDKEY', ${now.getTime()})`.execute(
        opened.db,
      );
      await opened.db.destroy();
      const expected = { key: 'old-key', requestHash: 'h', reference: 'INQ-OLDKEY', createdAt: now, outcome: 'created' };
      expect((await store.idempotency.findMany(['old-key'])).get('old-key')).toEqual(expected);
      const facts = await store.transaction((tx) =>
        store.intake.lookup({ keys: ['old-key'], fingerprints: [], since: now, references: [] }, tx),
      );
      expect(facts.keys.get('old-key')).toEqual(expected);
    });

    it('list page after page, each going on after the last row of the one before: every inquiry once, in order, ties included', async () => {
      await openTempStore();
      const base = Date.parse('2026-01-01T00:00:00Z');
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.record({ suffix: fc.stringMatching(/^[0-9A-Z]{4}$/), at: fc.integer({ min: 0, max: 3 }) }), {
            selector: (row) => row.suffix,
            maxLength: 25,
          }),
          fc.integer({ min: 1, max: 6 }),
          async (rows, pageSize) => {
            run++;
            // Each run in its own hour, listed with `since` that hour.
            const hour = base + run * 3_600_000;
            await store.inquiries.insertMany(
              rows.map(({ suffix, at }) => ({ inquiry: inquiry(`INQ-${run}${suffix}`, new Date(hour + at)), fingerprint: suffix })),
            );
            const since = new Date(hour);
            const whole = await store.inquiries.list({ limit: 100, since });
            const paged: InquiryRecord[] = [];
            let page: InquiryRecord[];
            // Bounded, so that a listing that goes round in circles fails rather than hangs.
            let pages = 0;
            do {
              const after = paged.at(-1);
              page = await store.inquiries.list({ limit: pageSize, since, ...(after && { after }) });
              paged.push(...page);
            } while (page.length === pageSize && ++pages <= rows.length);
            expect(whole).toHaveLength(rows.length);
            expect(whole.map(({ receivedAt }) => receivedAt.getTime())).toEqual(
              whole.map(({ receivedAt }) => receivedAt.getTime()).sort((a, b) => b - a),
            );
            expect(paged.map(({ reference }) => reference)).toEqual(whole.map(({ reference }) => reference));
          },
        ),
        { numRuns: 30 },
      );
    });

    it('count those received after a time, up to a limit (how fast all instances take them in)', async () => {
      await openTempStore();
      const received = ['00.000', '00.100', '00.150', '00.200'].map((second, index) => ({
        inquiry: inquiry(`INQ-DDDDD${index}`, new Date(`2026-01-01T00:00:${second}Z`)),
        fingerprint: `fp-${index}`,
      }));
      await store.inquiries.insertMany(received);
      const since = (second: string, limit: number) => store.inquiries.countReceivedSince(new Date(`2026-01-01T00:00:${second}Z`), limit);
      expect(await since('00.100', 10)).toBe(2); // after, not at
      expect(await since('00.000', 10)).toBe(3);
      expect(await since('00.000', 2)).toBe(2);
      expect(await since('00.200', 10)).toBe(0);
    });
  });

  describe('group commit', () => {
    const insertEach: BatchProcessor<string, string> = async (tx, references) => {
      const inserted = await store.inquiries.insertMany(
        references.map((reference) => ({ inquiry: inquiry(reference), fingerprint: reference })),
        tx,
      );
      return references.map((reference) => (inserted.has(reference) ? reference : new Error(`${reference} taken`)));
    };

    /** The store's transactions, counted. */
    const countingTransactions = () => {
      const counting = {
        transactions: 0,
        transaction: ((work) => {
          counting.transactions++;
          return store.transaction(work);
        }) as Store['transaction'],
      };
      return counting;
    };

    it('commits concurrent items in shared transactions and answers only after the commit', async () => {
      await openTempStore();
      const counting = countingTransactions();
      const committer = new GroupCommitter(counting, insertEach);
      const references = Array.from({ length: 100 }, (_, i) => `INQ-${String(i).padStart(6, '0')}`);
      const results = await Promise.all(references.map((reference) => committer.run(reference)));
      expect(results).toEqual(references);
      expect(counting.transactions).toBeLessThanOrEqual(2);
      // What was answered is on disk: a second connection to the same file sees all of it.
      const second = createStore(await openDatabase(database.config));
      expect(await second.inquiries.list({ limit: 1000 })).toHaveLength(100);
      await second.close();
    });

    /** A batch processor that records how many transactions overlap, each taking `ms`. */
    function overlapCounter(ms: (references: readonly string[]) => number) {
      const seen = { active: 0, most: 0 };
      const process: BatchProcessor<string, string> = async (tx, references) => {
        seen.active++;
        seen.most = Math.max(seen.most, seen.active);
        await new Promise((resolve) => setTimeout(resolve, ms(references)));
        try {
          return await insertEach(tx, references);
        } finally {
          seen.active--;
        }
      };
      return { seen, process };
    }
    const lanesReference = (n: number) => `INQ-L${String(n).padStart(5, '0')}`;

    it('starts a further transaction only once EXTRA_LANE_AT items wait, up to as many as the store runs in parallel', async () => {
      await openTempStore();
      const { seen, process } = overlapCounter(() => 400);
      // Only the count decides here: none of these waits long enough for the time to.
      const committer = new GroupCommitter(store, process, { concurrency: store.parallelWrites, extraLaneAfterMs: 60_000 });
      const references: string[] = [];
      const runs: Promise<string>[] = [];
      const arrive = async (count: number) => {
        for (let i = 0; i < count; i++) {
          const reference = lanesReference(references.length);
          references.push(reference);
          runs.push(committer.run(reference));
          // Each arrives after the last one has been taken into a transaction, if it started one.
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      // The first starts a transaction; the next ones wait for it, one too few to be worth a second.
      await arrive(EXTRA_LANE_AT);
      await new Promise((resolve) => setTimeout(resolve, 100)); // any transaction started has begun by now
      expect(seen.most).toBe(1);
      // The next makes EXTRA_LANE_AT waiting: a second transaction; each further EXTRA_LANE_AT a third and a fourth.
      await arrive(1 + EXTRA_LANE_AT * (store.parallelWrites - 2));
      expect(await Promise.all(runs)).toEqual(references);
      expect(seen.most).toBe(store.parallelWrites);
      expect(store.parallelWrites).toBe(database.config.kind === 'sqlite' ? 1 : 4);
    });

    it('spreads a burst larger than one batch over the transactions it may run at once', async () => {
      await openTempStore();
      const { seen, process } = overlapCounter(() => 300);
      const committer = new GroupCommitter(store, process, { concurrency: store.parallelWrites, extraLaneAfterMs: 60_000 });
      const references = Array.from({ length: MAX_BATCH_SIZE * store.parallelWrites }, (_, i) => lanesReference(i));
      // All in one turn of the event loop.
      expect(await Promise.all(references.map((reference) => committer.run(reference)))).toEqual(references);
      expect(seen.most).toBe(store.parallelWrites);
    });

    it('does not hold a few items for long behind a slow transaction where another may run beside it', async () => {
      await openTempStore();
      const { process } = overlapCounter((references) => (references.includes(lanesReference(0)) ? 1_500 : 0));
      const committer = new GroupCommitter(store, process, { concurrency: store.parallelWrites });
      const slow = committer.run(lanesReference(0));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = performance.now();
      let slowDone = false;
      void slow.then(() => {
        slowDone = true;
      });
      await expect(committer.run(lanesReference(1))).resolves.toBe(lanesReference(1));
      // On PostgreSQL it gets a transaction of its own after EXTRA_LANE_AFTER_MS; SQLite has one writer.
      if (store.parallelWrites > 1) {
        expect(slowDone).toBe(false);
        expect(performance.now() - started).toBeLessThan(EXTRA_LANE_AFTER_MS + 500);
      } else {
        expect(slowDone).toBe(true);
      }
      await slow;
    });

    it('rejects only the item refused, and isolates an item that breaks the shared transaction', async () => {
      await openTempStore();
      const locked: string[][] = [];
      const committer = new GroupCommitter<string, string>(
        store,
        async (tx, references) => {
          // A reference of "INQ-NOSUCH" makes a write that violates a foreign key: a delivery of an
          // inquiry nobody writes. The statement fails (on PostgreSQL, the commit).
          if (references.includes('INQ-NOSUCH')) await store.outbox.enqueue(['INQ-ABSENT'], ['email'], new Date(), tx);
          return insertEach(tx, references);
        },
        {
          lockNamesOf: (references) => {
            locked.push([...references]);
            return references.map((reference) => `test:${reference}`);
          },
        },
      );
      await committer.run('INQ-DDDDDD');
      const ok = committer.run('INQ-EEEEEE');
      const refused = committer.run('INQ-DDDDDD');
      const poison = committer.run('INQ-NOSUCH');
      const alsoOk = committer.run('INQ-FFFFFF');
      await expect(ok).resolves.toBe('INQ-EEEEEE');
      await expect(refused).rejects.toThrow('INQ-DDDDDD taken');
      await expect(poison).rejects.toThrow();
      await expect(alsoOk).resolves.toBe('INQ-FFFFFF');
      expect((await store.inquiries.list({ limit: 10 })).map((i) => i.reference).sort()).toEqual([
        'INQ-DDDDDD',
        'INQ-EEEEEE',
        'INQ-FFFFFF',
      ]);
      // The shared transaction locked the whole batch's names; each retry locks its own item's.
      expect(locked).toEqual([
        ['INQ-DDDDDD'],
        ['INQ-EEEEEE', 'INQ-DDDDDD', 'INQ-NOSUCH', 'INQ-FFFFFF'],
        ['INQ-EEEEEE'],
        ['INQ-DDDDDD'],
        ['INQ-NOSUCH'],
        ['INQ-FFFFFF'],
      ]);
    });

    it('fails a whole batch at once when the database fails, not item by item', async () => {
      await openTempStore();
      const counting = countingTransactions();
      const committer = new GroupCommitter<string, string>(counting, async () => {
        throw new Error('Connection terminated unexpectedly'); // no SQLSTATE: not one item's doing
      });
      const results = await Promise.allSettled(['INQ-GGGGG1', 'INQ-GGGGG2', 'INQ-GGGGG3'].map((reference) => committer.run(reference)));
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(counting.transactions).toBe(1);
    });
  });
});

/**
 * Every statement as it goes out to PostgreSQL (the protocol's Query or Parse message), and as its
 * answer comes back, by its first word.
 */
function statementsOnTheWire(): string[] {
  const events: string[] = [];
  const name = (text: string) => /^(begin|commit|select|insert|with)/.exec(text)?.[1] ?? text;
  const { query: simple, parse } = pg.Connection.prototype;
  vi.spyOn(pg.Connection.prototype, 'query').mockImplementation(function (this: pg.Connection, text: string) {
    events.push(`send ${name(text)}`);
    return simple.call(this, text);
  });
  vi.spyOn(pg.Connection.prototype, 'parse').mockImplementation(function (this: pg.Connection, ...args: Parameters<typeof parse>) {
    events.push(`send ${name(args[0].text)}`);
    return parse.apply(this, args);
  });
  const query = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text);
    const answer = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (answer instanceof Promise)
      void answer.then(
        () => events.push(`answer ${name(text)}`),
        () => {},
      );
    return answer as never;
  });
  return events;
}

describe('a PostgreSQL database that refused writes for a while', () => {
  const stores = storePerTest(freshPostgres);

  it('is written to again within a connection lifetime once it accepts writes, however steadily it is used', async () => {
    const { store: opened, database } = await stores.open({ connectionLifetimeSeconds: 1 });
    const name = new URL(database.url).pathname.slice(1);
    let n = 0;
    const write = () => {
      n++;
      return opened.transaction((tx) =>
        opened.inquiries.insertMany([{ inquiry: inquiry(`INQ-R0${String(n).padStart(4, '0')}`), fingerprint: `fp-ro-${n}` }], tx),
      );
    };
    await write();
    // Sessions begun from now on are read-only; the pool's current one is ended, so it opens one.
    await postgresAdmin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    await postgresAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
    const refused = async () => {
      for (;;) {
        const code = await write().then(
          () => 'written',
          (error: { code?: string }) => error.code,
        );
        if (code === '25006') return code; // read_only_sql_transaction (not the ended session's error)
      }
    };
    expect(await refused()).toBe('25006');
    await postgresAdmin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
    // Used every 20 ms, the read-only connection is never idle long enough for the pool to close it.
    const started = performance.now();
    let written = false;
    while (!written && performance.now() - started < 8_000) {
      written = await write().then(
        () => true,
        () => false,
      );
      await sleep(20);
    }
    expect(written).toBe(true);
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});

describe('a locked transaction on PostgreSQL', () => {
  const stores = storePerTest(freshPostgres);
  const open = async (): Promise<Store> => (await stores.open()).store;

  it('gives up after its lock timeout, and leaves no session in a transaction or holding a lock', async () => {
    const { store: opened, database } = await stores.open();
    const holder = await holdLock(opened, 'a name');
    const started = performance.now();
    const waiting = opened.transaction(async () => 'never', { lock: ['a name'], lockTimeoutMs: 300 });
    await expect(waiting).rejects.toMatchObject({ code: '55P03' }); // lock_not_available
    expect(performance.now() - started).toBeLessThan(5_000);
    await holder.release();
    // The pool's connections are all idle outside a transaction, and the locks are gone with them.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ in_transaction: number; advisory: number }>(
        `select (select count(*)::int from pg_stat_activity where datname = current_database() and state like 'idle in transaction%') as in_transaction,
                (select count(*)::int from pg_locks join pg_database d on d.oid = pg_locks.database where locktype = 'advisory' and d.datname = current_database()) as advisory`,
      );
      expect(rows[0]).toEqual({ in_transaction: 0, advisory: 0 });
    } finally {
      await admin.end();
    }
  });

  it('in a group commit, fails only the items whose lock another transaction holds: the rest of their batch commits', async () => {
    const opened = await open();
    const holder = await holdLock(opened, 'held');
    const committer = new GroupCommitter<string, string>(opened, async (_tx, items) => items.map((item) => `${item} done`), {
      lockNamesOf: (items) => [...items],
      lockTimeoutMs: 300,
    });
    // Queued in one turn: they share a batch, which waits for the held lock and times out.
    const outcomes = await Promise.allSettled(['held', 'free', 'also free'].map((item) => committer.run(item)));
    await holder.release();
    expect(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as { code?: string }).code)),
    ).toEqual(['55P03', 'free done', 'also free done']);
  });

  it('sends its first queries behind its begin, and queries made together, without waiting for an answer', async () => {
    const opened = await open();
    const events = statementsOnTheWire();
    const fingerprints = ['fp-pipe-1'];
    await opened.transaction(
      async (tx) => {
        await Promise.all([
          opened.inquiries.findRecentByFingerprints(fingerprints, new Date(0), tx),
          opened.inquiries.takenReferences(['INQ-PIPE01'], tx),
        ]);
        await Promise.all([
          opened.inquiries.insertMany([{ inquiry: inquiry('INQ-PIPE01'), fingerprint: 'fp-pipe-1' }], tx),
          opened.outbox.enqueue(['INQ-PIPE01'], ['email'], new Date(), tx),
        ]);
      },
      { lock: ['a name'] },
    );
    expect(events).toEqual([
      'send begin',
      'send select',
      'send select',
      'answer begin',
      'answer select',
      'answer select',
      'send insert',
      'send insert',
      'answer insert',
      'answer insert',
      'send commit',
      'answer commit',
    ]);
    expect(await opened.outbox.forReference('INQ-PIPE01')).toHaveLength(1);
  });

  it('carries an intake batch in two statements, its reads sent behind its begin, then its writes, then commit', async () => {
    const opened = await open();
    const service = createInquiryService({ store: opened, channels: ['email', 'webhook'] });
    await service.submit(validInquiry({ email: 'warm-up@example.com' })); // connected
    const events = statementsOnTheWire();
    const submitted = ['one', 'two', 'three'].map((name, index) =>
      service.submit(validInquiry({ email: `${name}@example.com` }), index === 0 ? {} : { idempotencyKey: `key-${name}` }),
    );
    expect((await Promise.all(submitted)).map((result) => result.outcome)).toEqual(['created', 'created', 'created']);
    expect(events).toEqual([
      'send begin',
      'send select',
      'answer begin',
      'answer select',
      'send with',
      'answer with',
      'send commit',
      'answer commit',
    ]);
  });

  it('writes each round of queries to the socket at once: three writes for a batch of three rounds', async () => {
    const opened = await open();
    await opened.transaction(async (tx) => opened.inquiries.findByReference('INQ-WARMUP', tx), { lock: ['a name'] }); // connected
    // Writes to PostgreSQL's socket, as they reach the socket's handle.
    let writes = 0;
    const socket = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method];
      vi.spyOn(socket, method).mockImplementation(function (this: Socket, ...args: unknown[]) {
        if (this.remotePort === 5432) writes++;
        return original.apply(this, args);
      });
    }
    await opened.transaction(
      async (tx) => {
        await Promise.all([
          opened.inquiries.findRecentByFingerprints(['fp-write-1'], new Date(0), tx),
          opened.inquiries.takenReferences(['INQ-WRITE1'], tx),
        ]);
        await Promise.all([
          opened.inquiries.insertMany([{ inquiry: inquiry('INQ-WRITE1'), fingerprint: 'fp-write-1' }], tx),
          opened.outbox.enqueue(['INQ-WRITE1'], ['email'], new Date(), tx),
        ]);
      },
      { lock: ['a name'] },
    );
    // begin + two selects; two inserts; commit. One write per query would be six.
    expect(writes).toBe(3);
    expect(await opened.outbox.forReference('INQ-WRITE1')).toHaveLength(1);
  });

  it("checks an inquiry's deliveries and keys against it at commit: written before it they commit, without it nothing does", async () => {
    const opened = await open();
    await opened.transaction(
      async (tx) => {
        await opened.outbox.enqueue(['INQ-LATER1'], ['email'], new Date(), tx);
        await opened.idempotency.insertMany(
          [{ key: 'k-later', requestHash: 'h', reference: 'INQ-LATER1', createdAt: new Date(), outcome: 'created' }],
          tx,
        );
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-LATER1'), fingerprint: 'fp-later' }], tx);
      },
      { lock: ['a name'] },
    );
    expect(await opened.outbox.forReference('INQ-LATER1')).toHaveLength(1);
    expect((await opened.idempotency.findMany(['k-later'])).get('k-later')?.reference).toBe('INQ-LATER1');

    let written = false;
    const orphan = opened.transaction(
      async (tx) => {
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-ORPHAN'), fingerprint: 'fp-orphan' }], tx);
        await opened.outbox.enqueue(['INQ-NOSUCH'], ['email'], new Date(), tx);
        written = true; // the statement itself passed
      },
      { lock: ['a name'] },
    );
    await expect(orphan).rejects.toMatchObject({ code: '23503' }); // foreign_key_violation, at commit
    expect(written).toBe(true);
    expect(await opened.inquiries.findByReference('INQ-ORPHAN')).toBeUndefined();
    expect(await opened.outbox.forReference('INQ-NOSUCH')).toEqual([]);
  });

  it('refuses a query made on its handle after it has ended', async () => {
    const opened = await open();
    let leaked: Tx | undefined;
    await opened.transaction(
      async (tx) => {
        leaked = tx;
        await opened.inquiries.findByReference('INQ-LEAK01', tx);
      },
      { lock: ['a name'] },
    );
    const late = opened.inquiries.insertMany([{ inquiry: inquiry('INQ-LEAK01'), fingerprint: 'fp-leak' }], leaked);
    await expect(late).rejects.toThrow('a transaction that has ended');
    expect(await opened.inquiries.findByReference('INQ-LEAK01')).toBeUndefined();

    // …and one made while its commit is on its way, before the answer.
    let meanwhile: Promise<string> | undefined;
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const sent = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (args[0] === 'commit' && meanwhile === undefined)
        meanwhile = opened.inquiries.insertMany([{ inquiry: inquiry('INQ-LEAK02'), fingerprint: 'fp-leak-2' }], leaked).then(
          () => 'stored',
          (error: Error) => error.message,
        );
      return sent as never;
    });
    await opened.transaction(
      async (tx) => {
        leaked = tx;
        await opened.inquiries.findByReference('INQ-LEAK02', tx);
      },
      { lock: ['a name'] },
    );
    expect(await meanwhile).toMatch('a transaction that has ended');
    expect(await opened.inquiries.findByReference('INQ-LEAK02')).toBeUndefined();
  });

  it('reports its lock timeout, not the failures of the queries sent behind its begin', async () => {
    const opened = await open();
    const holder = await holdLock(opened, 'a name');
    const waiting = opened.transaction((tx) => opened.inquiries.findByReference('INQ-NOSUCH', tx), {
      lock: ['a name'],
      lockTimeoutMs: 200,
    });
    await expect(waiting).rejects.toMatchObject({ code: '55P03' }); // lock_not_available, not 25P02
    await holder.release();
  });

  it('is reported rolled back, not committed, where its work let a failed statement pass', async () => {
    const opened = await open();
    const swallowed = opened.transaction(
      async (tx) => {
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-SWALLO'), fingerprint: 'fp-swallow' }], tx);
        const key = { key: 'k', requestHash: 'h', reference: 'INQ-SWALLO', createdAt: new Date(), outcome: 'created' as const };
        await opened.idempotency.insertMany([key], tx);
        // The same key again: a unique violation, caught and ignored.
        await opened.idempotency.insertMany([key], tx).catch(() => {});
        return 'done';
      },
      { lock: ['a name'] },
    );
    await expect(swallowed).rejects.toBeInstanceOf(RolledBackError);
    expect(await opened.inquiries.findByReference('INQ-SWALLO')).toBeUndefined();
    // The connection is fit for use again.
    await opened.transaction((tx) => opened.inquiries.insertMany([{ inquiry: inquiry('INQ-AFTER1'), fingerprint: 'fp-after' }], tx), {
      lock: ['a name'],
    });
    expect(await opened.inquiries.findByReference('INQ-AFTER1')).toBeDefined();
  });
});

describe('a transaction on SQLite', () => {
  const stores = storePerTest(freshSqlite);

  it('holds the write lock from its begin: another process cannot write between its reads and its writes, which would fail it', async () => {
    const { store: opened, database } = await stores.open();
    // Another process's connection (the CLI's) to the same file, which gives up at once when locked.
    const other = new SQLite(database.config.kind === 'sqlite' ? database.config.path : '');
    other.pragma('busy_timeout = 0');
    const write = other.prepare(
      `insert into inquiries (reference, first_name, last_name, email, message, fingerprint, received_at)
       values ('INQ-OTHER0', 'A', 'B', 'a@example.com', 'Hello', 'fp-other', 0)`,
    );
    try {
      await opened.transaction(async (tx) => {
        expect(await opened.inquiries.findByReference('INQ-MINE00', tx)).toBeUndefined(); // it reads first, as intake does
        // Begun deferred, this write would go through, and the transaction's own write below would
        // then fail at once (SQLITE_BUSY_SNAPSHOT: what it read is stale, and waiting cannot help).
        expect(() => write.run()).toThrow(/database is locked/);
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-MINE00'), fingerprint: 'fp-mine' }], tx);
      });
    } finally {
      other.close();
    }
    expect(await opened.inquiries.findByReference('INQ-MINE00')).toBeDefined();
  });
});

describe('SQLite failing under a transaction', () => {
  const stores = storePerTest(freshSqlite);
  async function open() {
    const { store, opened, database } = await stores.open();
    return { store, opened, path: database.config.kind === 'sqlite' ? database.config.path : '' };
  }
  const big = (n: number) => ({
    inquiry: { ...inquiry(`INQ-FF${String(n).padStart(4, '0')}`), message: 'x'.repeat(1_500) },
    fingerprint: `fp-full-${n}`,
  });

  it('fails with what went wrong when SQLite rolled it back itself (a full disk), not "no transaction is active"; the next commits', async () => {
    const { store, opened } = await open();
    // As SQLite does on some errors (SQLITE_FULL, SQLITE_IOERR) in the middle of a transaction.
    const endedBySqlite = store.transaction(async (tx) => {
      await store.inquiries.insertMany([big(1)], tx);
      await sql`rollback`.execute(tx as unknown as Kysely<Database>);
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    });
    await expect(endedBySqlite).rejects.toMatchObject({ code: 'SQLITE_FULL', message: 'database or disk is full' });
    expect(await store.inquiries.findByReference('INQ-FF0001')).toBeUndefined();
    // A database that reaches its size limit midway.
    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(opened.db)).rows[0]?.page_count);
    await sql.raw(`pragma max_page_count = ${pages + 4}`).execute(opened.db);
    const fill = async (tx: Tx) => {
      for (let n = 0; n < 100; n++) await store.inquiries.insertMany([big(n)], tx);
    };
    await expect(store.transaction(fill)).rejects.toMatchObject({
      code: 'SQLITE_FULL',
      message: 'database or disk is full',
    });
    expect(await store.inquiries.findByReference('INQ-FF0000')).toBeUndefined();
    await sql.raw('pragma max_page_count = 1073741823').execute(opened.db);
    await store.transaction((tx) => store.inquiries.insertMany([big(99)], tx));
    expect(await store.inquiries.findByReference('INQ-FF0099')).toBeDefined();
  });

  it.each(['removed', 'replaced'])(
    'commits nothing more, and fails its health check, once its file is %s while open (it would be lost at the next start)',
    async (how) => {
      const { store, path } = await open();
      await store.transaction((tx) => store.inquiries.insertMany([big(1)], tx));
      await store.ping();
      if (how === 'removed') rmSync(dirname(path), { recursive: true, force: true });
      else {
        copyFileSync(path, `${path}.backup`);
        renameSync(`${path}.backup`, path); // a backup moved over it
      }
      const gone = `the database file ${path} was removed or replaced while the service had it open`;
      await expect(store.transaction((tx) => store.inquiries.insertMany([big(2)], tx))).rejects.toThrow(gone);
      await expect(store.ping()).rejects.toThrow(gone);
      // A statement that commits by itself too (a revocation, a lease given back).
      await expect(store.auth.revokeToken('jti-after', new Date(Date.now() + 60_000), new Date())).rejects.toThrow(gone);
      await expect(store.outbox.releaseLeases()).rejects.toThrow(gone);
      expect(await store.inquiries.findByReference('INQ-FF0002')).toBeUndefined(); // rolled back, not committed unnamed
    },
  );
});

describe('a transaction on SQLite, while another process holds the lock', () => {
  const stores = storePerTest(freshSqlite);

  it('waits for it without holding up the event loop, then commits', async () => {
    const { store: opened, database } = await stores.open();
    const path = database.config.kind === 'sqlite' ? database.config.path : '';
    // Another process (an operator's sqlite3 shell, say) holds the write lock for 600 ms.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(path)});
         db.exec('begin immediate'); process.stdout.write('locked\\n');
         setTimeout(() => { db.exec('commit'); process.exit(0); }, 600);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    // The longest the event loop went without running a 5 ms timer, while the transaction waited.
    let last = performance.now();
    let longestGapMs = 0;
    const ticking = setInterval(() => {
      const now = performance.now();
      longestGapMs = Math.max(longestGapMs, now - last);
      last = now;
    }, 5);
    try {
      await opened.transaction(async (tx) => {
        await opened.inquiries.findByReference('INQ-WAITED', tx);
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-WAITED'), fingerprint: 'fp-waited' }], tx);
      });
    } finally {
      clearInterval(ticking);
    }
    longestGapMs = Math.max(longestGapMs, performance.now() - last); // a loop held to the end ticked not once
    expect(await opened.inquiries.findByReference('INQ-WAITED')).toBeDefined();
    // SQLite's own busy handler sleeps on the event loop: it went 600 ms without a tick.
    expect(longestGapMs).toBeLessThan(300);
  });

  it('does not keep a database that is up to date from opening (no migration to run, no write lock needed)', async () => {
    const { database } = await stores.open();
    const path = database.config.kind === 'sqlite' ? database.config.path : '';
    // Another process holds the write lock past the 5 s a transaction waits for it (a long
    // `requeue --all`, a VACUUM): the service must still start on the file.
    const holder = new SQLite(path);
    holder.exec('begin immediate');
    try {
      const again = await openDatabase(database.config);
      await again.ping();
      await again.db.destroy();
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  });
});

describe('causedByAnItem', () => {
  it('tells errors one item can cause from failures of the database', () => {
    for (const code of ['23505', '23503', '22001', '40P01', '55P03', 'SQLITE_CONSTRAINT_FOREIGNKEY', 'SQLITE_MISMATCH']) {
      expect(causedByAnItem(Object.assign(new Error(code), { code })), code).toBe(true);
    }
    for (const error of [
      new Error('Connection terminated'),
      Object.assign(new Error('x'), { code: '57P01' }),
      { code: 'ECONNREFUSED' },
      null,
    ]) {
      expect(causedByAnItem(error)).toBe(false);
    }
  });
});

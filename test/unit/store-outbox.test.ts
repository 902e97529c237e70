// The outbox on each backend: leases, attempt records (one, or a batch), counts by channel and
// status kept where successes are recorded.
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import type { AttemptRecord, Store } from '../../src/storage/ports.js';
import type { Database } from '../../src/storage/schema.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, type FreshDatabase, storePerTest } from '../helpers/databases.js';
import { takeBackBefore } from '../helpers/older-release.js';
import { inquiry, queueInquiries } from '../helpers/store-fixtures.js';

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let database: FreshDatabase;
  async function openTempStore(): Promise<Store> {
    ({ store, database } = await stores.open());
    return store;
  }

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

    it('records a batch of attempts: successes together, others one by one, numbered per delivery', async () => {
      database = await fresh();
      const opened = await openDatabase(database.config);
      store = createStore(opened);
      const now = new Date('2026-01-01T00:00:00Z');
      const references = ['INQ-DDDDD1', 'INQ-DDDDD2', 'INQ-DDDDD3'];
      await queueInquiries(store, references, ['email'], now);
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
      await queueInquiries(store, references, ['email', 'webhook'], now);
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
      await takeBackBefore(older.db, '008');
      await older.db.destroy();

      const upgraded = await openDatabase(database.config);
      store = createStore(upgraded);
      expect(await reported()).toEqual(['email dead 1', 'email succeeded 2', 'webhook pending 1', 'webhook succeeded 2']);
      // Opened again, nothing is counted twice.
      await store.close();
      store = createStore(await openDatabase(database.config));
      expect(await reported()).toEqual(['email dead 1', 'email succeeded 2', 'webhook pending 1', 'webhook succeeded 2']);
    });
  });
});

// PostgreSQL connections and locked transactions: lock timeouts, pipelined rounds, statements
// checked at commit, a database that refused writes for a while (fresh databases on 127.0.0.1:5432).
import { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { createInquiryService } from '../../src/inquiries/service.js';
import { GroupCommitter } from '../../src/storage/group-commit.js';
import type { Store, Tx } from '../../src/storage/ports.js';
import { RolledBackError } from '../../src/storage/postgres-locked-transaction.js';
import { validInquiry } from '../helpers/app.js';
import { freshPostgres, postgresAdmin, storePerTest } from '../helpers/databases.js';
import { holdLock, inquiry } from '../helpers/store-fixtures.js';

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

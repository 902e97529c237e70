// Store transactions on each backend (a temporary SQLite file, a fresh PostgreSQL database on
// 127.0.0.1:5432): named locks, afterCommit, durable and non-durable commits.
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import type { InquiryRecord, Store, Tx } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, type FreshDatabase, storePerTest } from '../helpers/databases.js';
import { inquiry } from '../helpers/store-fixtures.js';

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let database: FreshDatabase;
  async function openTempStore(): Promise<Store> {
    ({ store, database } = await stores.open());
    return store;
  }

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
      // SQLite statements are kept prepared (src/storage/sqlite-statement-cache.ts): note the run, not the prepare.
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
});

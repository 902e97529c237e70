// Group commit on each backend: items sharing transactions, further lanes, items refused alone, and
// which errors one item can cause.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import {
  type BatchProcessor,
  causedByAnItem,
  EXTRA_LANE_AFTER_MS,
  EXTRA_LANE_AT,
  GroupCommitter,
  MAX_BATCH_SIZE,
} from '../../src/storage/group-commit.js';
import type { Store } from '../../src/storage/ports.js';
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

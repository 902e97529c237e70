// Bulk writes in chunks on each backend: re-queueing failed and dead deliveries, purging expired
// idempotency keys.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ACROSS_PROCESSES, IN_PROCESS } from '../../src/storage/bulk.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, type FreshDatabase, storePerTest } from '../helpers/databases.js';
import { inquiry, queueInquiries } from '../helpers/store-fixtures.js';

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let database: FreshDatabase;
  async function openTempStore(): Promise<Store> {
    ({ store, database } = await stores.open());
    return store;
  }

  describe('bulk writes', () => {
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
      await queueInquiries(store, references, [channel], now);
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
  });
});

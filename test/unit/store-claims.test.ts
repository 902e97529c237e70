// Claims of due deliveries on each backend: per channel, and service messages ahead of inquiry mail.
import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dueDeliveries } from '../../src/storage/claim-due.js';
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
      await queueInquiries(store, references, ['email'], now);
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
});

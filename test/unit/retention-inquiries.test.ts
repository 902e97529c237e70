// Retention of inquiries on each backend, with a controlled clock: what RETENTION_SPAM and
// RETENTION_INBOX delete (with deliveries, attempts and keys), what a pending delivery keeps, in
// batches that let other writes through, and instances running it at once.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { INQUIRIES_PER_BATCH } from '../../src/maintenance.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/ports.js';
import type { Database } from '../../src/storage/schema.js';
import { createStore } from '../../src/storage/store.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { BACKENDS, freshPostgres, storePerTest } from '../helpers/databases.js';
import { attemptDue, DAY_MS, maintenanceOn, stillStored, storeInquiries } from '../helpers/retention-fixtures.js';

const START = new Date('2026-03-01T12:00:00Z');
const refs = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `INQ-${prefix}${String(i).padStart(4, '0')}`);

/** Rows left in the tables an inquiry takes along. */
async function rowsLeft(db: Kysely<Database>) {
  const count = async (table: 'deliveries' | 'delivery_attempts' | 'idempotency_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { deliveries: await count('deliveries'), attempts: await count('delivery_attempts'), keys: await count('idempotency_keys') };
}

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('deletes spam older than 30 days (the default) with its deliveries, attempts and keys, and keeps the inbox (off)', async () => {
    const { store, opened } = await stores.open();
    const [oldSpam, youngSpam, oldInbox] = [refs('OS', 2), refs('YS', 1), refs('OI', 1)];
    const at = (days: number) => new Date(START.getTime() - days * DAY_MS);
    // Keys younger than a day, which their own expiry would keep: they go with their inquiry.
    await storeInquiries(store, oldSpam, { verdict: 'spam', at: at(31), keyAt: at(0.5), channels: ['email', 'webhook'] });
    await storeInquiries(store, youngSpam, { verdict: 'spam', at: at(29), keyAt: at(0.5) });
    await storeInquiries(store, oldInbox, { verdict: 'inbox', at: at(400), keyAt: at(0.5) });
    await attemptDue(store, at(1), 'failed');
    const run = maintenanceOn(store, {}, START);

    expect(await run.runAfter(0)).toEqual({ inquiries: 2, deliveries: 4, attempts: 4, idempotencyKeys: 2 });
    expect(await stillStored(store, [...oldSpam, ...youngSpam, ...oldInbox])).toEqual([...oldInbox, ...youngSpam].sort());
    expect(await rowsLeft(opened.db)).toEqual({ deliveries: 2, attempts: 2, keys: 2 });

    // Two days on, the younger spam has had its 30 days too.
    expect((await run.runAfter(2 * DAY_MS)).inquiries).toBe(1);
    expect(await stillStored(store, [...youngSpam, ...oldInbox])).toEqual(oldInbox);
  });

  it('counts the 30 days of spam moved to the quarantine later (spam REF) from the move, not from its receipt', async () => {
    const { store } = await stores.open();
    const moved = refs('MV', 1);
    await storeInquiries(store, moved, { verdict: 'inbox', at: new Date(START.getTime() - 400 * DAY_MS), channels: [] });
    await store.inquiries.setVerdict(moved[0] as string, 'spam', [], new Date(START.getTime() - 2 * DAY_MS));
    const run = maintenanceOn(store, {}, START);
    expect((await run.runAfter(0)).inquiries ?? 0).toBe(0);
    expect(await stillStored(store, moved)).toEqual(moved);
    expect((await run.runAfter(29 * DAY_MS)).inquiries).toBe(1);
    expect(await stillStored(store, moved)).toEqual([]);
  });

  it('deletes inbox inquiries past RETENTION_INBOX in calendar months, and keeps spam with RETENTION_SPAM=off', async () => {
    const { store } = await stores.open();
    // 24 months before 2026-03-01T12:00Z is 2024-03-01T12:00Z.
    await storeInquiries(store, ['INQ-IN0001'], { verdict: 'inbox', at: new Date('2024-03-01T11:59:59Z') });
    await storeInquiries(store, ['INQ-IN0002'], { verdict: 'inbox', at: new Date('2024-03-01T12:00:00Z') });
    await storeInquiries(store, ['INQ-SP0001'], { verdict: 'spam', at: new Date('2020-01-01T00:00:00Z') });
    await attemptDue(store, new Date('2024-03-02T00:00:00Z'), 'succeeded');
    const run = maintenanceOn(store, { inbox: '24m', spam: 'off' }, START);

    expect((await run.runAfter(0)).inquiries).toBe(1);
    expect(await stillStored(store, ['INQ-IN0001', 'INQ-IN0002', 'INQ-SP0001'])).toEqual(['INQ-IN0002', 'INQ-SP0001']);
  });

  it('keeps an inquiry while a delivery of it is pending, and deletes it at the next run once the delivery has ended', async () => {
    const { store } = await stores.open();
    const old = new Date(START.getTime() - 40 * DAY_MS);
    await storeInquiries(store, ['INQ-PD0001'], { verdict: 'inbox', at: old, keyAt: START, channels: ['email', 'webhook'] });
    const run = maintenanceOn(store, { inbox: '30d' }, START);

    expect(await run.runAfter(0)).toEqual({});
    // Tried and to be tried again: still pending, still kept, its finished-looking nothing touched.
    await attemptDue(store, run.now, 'retry');
    expect(await run.runAfter(DAY_MS)).toEqual({});
    expect(await stillStored(store, ['INQ-PD0001'])).toEqual(['INQ-PD0001']);
    expect((await store.outbox.forReference('INQ-PD0001')).map((delivery) => delivery.status)).toEqual(['pending', 'pending']);

    // Both end (one given up, one sent): the next run deletes the inquiry and both deliveries.
    const later = new Date(run.now.getTime() + 2 * 60_000);
    const due = await store.outbox.claimDue(later, 10, 60_000, 'w');
    const [dead, sent] = due.map(({ delivery }) => delivery);
    if (!dead || !sent) throw new Error('both deliveries should be due');
    const attempt = { attemptedAt: later, durationMs: 5 };
    await store.outbox.recordAttempt({
      deliveryId: dead.id,
      owner: 'w',
      attempts: dead.attempts,
      attempt: { ...attempt, outcome: 'dead', error: 'gave up' },
      result: { outcome: 'dead', error: 'gave up' },
    });
    expect(await run.runAfter(0)).toEqual({});
    await store.outbox.recordAttempt({
      deliveryId: sent.id,
      owner: 'w',
      attempts: sent.attempts,
      attempt: { ...attempt, outcome: 'succeeded', error: null },
      result: { outcome: 'succeeded' },
    });
    expect(await run.runAfter(DAY_MS)).toMatchObject({ inquiries: 1, deliveries: 2, attempts: 4 });
    expect(await stillStored(store, ['INQ-PD0001'])).toEqual([]);
  });

  it('deletes more inquiries than a batch in several short transactions, letting a write waiting meanwhile through', async () => {
    const { store, opened } = await stores.open();
    const old = refs('BA', 2 * INQUIRIES_PER_BATCH + 7);
    await storeInquiries(store, old, { verdict: 'spam', at: new Date(START.getTime() - 60 * DAY_MS), channels: ['email', 'webhook'] });
    await attemptDue(store, new Date(START.getTime() - 59 * DAY_MS), 'succeeded');
    const run = maintenanceOn(store, {}, START);
    // A write asked for while the first batch runs goes in before the next batch, not after them all:
    // the next batch waits (5 s at most) for it, which only a run holding one long transaction would block.
    const deleteInquiries = store.retention.deleteInquiries.bind(store.retention);
    let batchesDone = 0;
    let write: Promise<number> | undefined;
    const batches = vi.spyOn(store.retention, 'deleteInquiries').mockImplementation(async (...args) => {
      const batch = deleteInquiries(...args);
      write ??= storeInquiries(store, ['INQ-NEW001'], { verdict: 'inbox', at: START }).then(() => batchesDone);
      const done = await batch;
      batchesDone++;
      if (batchesDone === 1) await Promise.race([write, sleep(5_000, undefined, { ref: false })]);
      return done;
    });

    expect(await run.maintenance.run()).toMatchObject({ inquiries: old.length, deliveries: 2 * old.length, attempts: 2 * old.length });
    expect(await write).toBeLessThanOrEqual(1);
    expect(batches).toHaveBeenCalledTimes(3);
    expect(batches.mock.calls.every(([, , limit]) => limit === INQUIRIES_PER_BATCH)).toBe(true);
    expect(await stillStored(store, [...old, 'INQ-NEW001'])).toEqual(['INQ-NEW001']);
    expect((await rowsLeft(opened.db)).deliveries).toBe(1);
  });

  it('logs what a run deleted by kind, without anything the rows held, and counts it in the metrics', async () => {
    const { store } = await stores.open();
    await storeInquiries(store, ['INQ-LG0001'], { verdict: 'spam', at: new Date(START.getTime() - 31 * DAY_MS), channels: [] });
    const run = maintenanceOn(store, {}, START);
    await run.runAfter(0);
    const line = run.lines.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'maintenance deleted what is no longer kept');
    expect(line).toMatchObject({ level: 30, deleted: { inquiries: 1, idempotencyKeys: 1 } });
    expect(run.lines.join('\n')).not.toMatch(/INQ-LG0001|ada@example\.com|Lovelace|message of/);
    const metric = await run.metrics.registry.getSingleMetricAsString('studio_inquiry_retention_deleted_total');
    expect(metric).toContain('studio_inquiry_retention_deleted_total{kind="inquiries"} 1');
    expect(metric).toContain('studio_inquiry_retention_deleted_total{kind="idempotencyKeys"} 1');

    // Nothing more to delete: a debug line, no info line.
    run.lines.length = 0;
    expect(await run.runAfter(0)).toEqual({});
    expect(run.lines.map((text) => JSON.parse(text))).toEqual([
      expect.objectContaining({ level: 20, msg: 'maintenance found nothing to delete' }),
    ]);
  });
});

// Several instances share one PostgreSQL (a SQLite database has one service process).
describe('on PostgreSQL, several instances', () => {
  const postgres = storePerTest(freshPostgres);

  it('deletes each inquiry once when two instances run the maintenance at the same time', async () => {
    const { store, database } = await postgres.open();
    const old = refs('TW', 3 * INQUIRIES_PER_BATCH);
    await storeInquiries(store, old, { verdict: 'spam', at: new Date(START.getTime() - 60 * DAY_MS) });
    await attemptDue(store, new Date(START.getTime() - 59 * DAY_MS), 'failed');
    const other: Store = createStore(await openDatabase(database.config));
    try {
      const [first, second] = await Promise.all([maintenanceOn(store, {}, START).runAfter(0), maintenanceOn(other, {}, START).runAfter(0)]);
      expect((first.inquiries ?? 0) + (second.inquiries ?? 0)).toBe(old.length);
      expect((first.deliveries ?? 0) + (second.deliveries ?? 0)).toBe(old.length);
      expect(await stillStored(store, old)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('keeps an inquiry and all its deliveries while a re-queue holds one of them, and the inquiry once re-queued', async () => {
    const { store, database } = await postgres.open();
    await storeInquiries(store, ['INQ-RQ0001'], {
      verdict: 'inbox',
      at: new Date(START.getTime() - 60 * DAY_MS),
      keyAt: START,
      channels: ['email', 'webhook'],
    });
    await attemptDue(store, new Date(START.getTime() - 59 * DAY_MS), 'failed');
    const [email] = (await store.outbox.forReference('INQ-RQ0001')).filter((delivery) => delivery.channel === 'email');
    // Another process re-queuing the email delivery, its transaction not yet committed.
    const requeue = new pg.Client({ connectionString: database.url });
    await requeue.connect();
    try {
      await requeue.query('begin');
      await requeue.query(`update deliveries set status = 'pending', finished_at = null where id = $1`, [email?.id]);
      const run = maintenanceOn(store, { inbox: '30d' }, START);
      expect(await run.runAfter(0)).toEqual({});
      await requeue.query('commit');
      expect(await run.runAfter(0)).toEqual({});
      expect((await store.outbox.forReference('INQ-RQ0001')).map((delivery) => delivery.status)).toEqual(['pending', 'failed']);
    } finally {
      await requeue.end();
    }
  });
});

describe('the service', () => {
  it('runs the maintenance as it starts, with the retention its configuration sets', async () => {
    const dir = tempDir();
    try {
      const first = await startTestApp({ dir, startWorker: false });
      const received = (days: number) => new Date(Date.now() - days * DAY_MS);
      await storeInquiries(first.services.store, ['INQ-ST0001'], { verdict: 'inbox', at: received(3), channels: [] });
      await storeInquiries(first.services.store, ['INQ-ST0002'], { verdict: 'inbox', at: received(1), channels: [] });
      await first.close();

      const lines: string[] = [];
      const second = await startTestApp({ dir, startWorker: false, env: { RETENTION_INBOX: '2d', LOG_LEVEL: 'info' }, logLines: lines });
      try {
        await vi.waitUntil(() => lines.some((line) => line.includes('maintenance deleted')), { timeout: 10_000 });
        expect(await stillStored(second.services.store, ['INQ-ST0001', 'INQ-ST0002'])).toEqual(['INQ-ST0002']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

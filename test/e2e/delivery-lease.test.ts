// Two delivery workers on one database, a short lease, and an SMTP server taking a second per mail: the
// first claims everything, most sends waiting far longer than the lease. Alive, it renews the leases:
// the other takes none over, each inquiry is mailed once, every attempt recorded. On both backends.
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmailChannel } from '../../src/delivery/email.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createInquiryService } from '../../src/inquiries/service.js';
import { openDatabase } from '../../src/storage/database.js';
import { createStore } from '../../src/storage/store.js';
import { loadStudioProfile } from '../../src/studio/profile.js';
import { validInquiry } from '../helpers/app.js';
import { BACKENDS, freshPostgres } from '../helpers/databases.js';
import { startSmtpServer } from '../helpers/smtp.js';

const LEASE_MS = 4_000;
const INQUIRIES = 32;
const SMTP_ACCEPT_MS = 1_000;

let cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)('two workers on one $name database, a slow SMTP server and a short lease', ({ fresh }) => {
  it.each([
    { renewals: 'renewing its leases', cutOff: false },
    { renewals: 'unable to renew them (cut off, or frozen past the lease)', cutOff: true },
  ])(
    'mail each inquiry once and record every attempt, the first worker $renewals',
    async ({ cutOff }) => {
      const smtp = await startSmtpServer();
      cleanups.push(() => smtp.stop());
      smtp.acceptDelayMs = SMTP_ACCEPT_MS;
      const database = await fresh();
      cleanups.push(() => database.drop());
      const profile = loadStudioProfile(null);

      // One store, channel (its own SMTP pool) and worker per "instance".
      const instance = async () => {
        const opened = await openDatabase(database.config);
        const store = createStore(opened);
        const channel = createEmailChannel({ smtpUrl: smtp.url, from: 'Studio <no-reply@example.com>', to: 'studio@example.com', profile });
        const worker = new DeliveryWorker({
          store,
          channels: [channel],
          logger: pino({ level: 'silent' }),
          leaseMs: LEASE_MS,
          pollIntervalMs: 50,
          pacer: null,
        });
        cleanups.push(async () => {
          await worker.stop(0);
          await channel.close?.();
          await store.close();
        });
        return { db: opened.db, store, worker };
      };
      const a = await instance();
      const b = await instance();
      // Cut off, A starts no send once less than a third of its lease is left: B sends those.
      if (cutOff) vi.spyOn(a.store.outbox, 'renewLeases').mockRejectedValue(new Error('the database is away'));

      const inquiries = createInquiryService({ store: a.store, channels: ['email'] });
      for (let i = 0; i < INQUIRIES; i++) {
        await inquiries.submit(validInquiry({ email: `person-${i}@example.com`, message: `slow mail ${i}` }));
      }
      // Held by A, or already sent by it: none is left for B to claim unless a lease of A's lapses.
      const takenByA = async () =>
        Number(
          (
            await a.db
              .selectFrom('deliveries')
              .select((eb) => eb.fn.countAll().as('count'))
              .where((eb) => eb.or([eb('locked_by', '=', a.worker.id), eb('status', '=', 'succeeded')]))
              .executeTakeFirstOrThrow()
          ).count,
        );

      // A claims every delivery in one go; only then does B start, and finds them all leased.
      await a.worker.start();
      await vi.waitUntil(async () => (await takenByA()) === INQUIRIES, { timeout: 5_000, interval: 50 });
      await b.worker.start();

      // A's last sends finish about 8 s (32 mails, 4 connections, 1 s each) after its claim: twice the lease.
      await vi.waitUntil(async () => (await a.store.outbox.countByStatus()).succeeded === INQUIRIES, { timeout: 30_000, interval: 50 });
      await sleep(SMTP_ACCEPT_MS + 500); // time for a second copy to arrive, if any were sent

      const mailed = smtp.received.map((mail) => String(mail.parsed.headers.get('x-inquiry-reference')));
      expect(new Set(mailed).size).toBe(INQUIRIES);
      expect(mailed).toHaveLength(INQUIRIES);
      const deliveries = await a.db.selectFrom('deliveries').select(['status', 'attempts', 'locked_by']).execute();
      expect(deliveries.map(({ status, attempts, locked_by }) => ({ status, attempts: Number(attempts), locked_by }))).toEqual(
        Array(INQUIRIES).fill({ status: 'succeeded', attempts: 1, locked_by: null }),
      );
      // Every mail sent is an attempt on record.
      const attempts = await a.db.selectFrom('delivery_attempts').select(['attempt', 'outcome']).execute();
      expect(attempts).toEqual(Array(INQUIRIES).fill({ attempt: 1, outcome: 'succeeded' }));
    },
    60_000,
  );

  it('renew only the leases their owner still holds', async () => {
    const database = await fresh();
    cleanups.push(() => database.drop());
    const store = createStore(await openDatabase(database.config));
    cleanups.push(() => store.close());
    const t0 = new Date('2030-01-01T00:00:00Z');
    const at = (ms: number) => new Date(t0.getTime() + ms);
    await store.outbox.enqueueMessage({ id: 'message-1', to: 'ada@example.com', subject: 'Your code', body: '123456' }, 'email', t0);
    const [claimed] = await store.outbox.claimDue(t0, 10, LEASE_MS, 'worker-a');
    const id = claimed?.delivery.id ?? '';

    expect(await store.outbox.renewLeases([id], 'worker-b', at(10 * LEASE_MS))).toEqual([]);
    expect(await store.outbox.renewLeases([id], 'worker-a', at(3 * LEASE_MS))).toEqual([id]);
    // Renewed: not claimable after the first lease, only after the renewed one.
    expect(await store.outbox.claimDue(at(2 * LEASE_MS), 10, LEASE_MS, 'worker-b')).toEqual([]);
    expect(await store.outbox.claimDue(at(3 * LEASE_MS), 10, LEASE_MS, 'worker-b')).toHaveLength(1);
    // Taken over: the first owner's renewal no longer touches it, and the other's lease ends on time.
    expect(await store.outbox.renewLeases([id], 'worker-a', at(100 * LEASE_MS))).toEqual([]);
    expect(await store.outbox.claimDue(at(4 * LEASE_MS), 10, LEASE_MS, 'worker-c')).toHaveLength(1);
  });
});

describe('lease renewal on PostgreSQL', () => {
  it('skips a lease whose row another transaction holds instead of waiting for it (it would deadlock with an attempt record)', async () => {
    const database = await freshPostgres();
    cleanups.push(() => database.drop());
    const store = createStore(await openDatabase(database.config));
    cleanups.push(() => store.close());
    const now = new Date();
    for (const id of ['message-1', 'message-2']) {
      await store.outbox.enqueueMessage({ id, to: 'ada@example.com', subject: 'Your code', body: '123456' }, 'email', now);
    }
    const ids = (await store.outbox.claimDue(now, 10, LEASE_MS, 'worker-a')).map((due) => due.delivery.id);
    expect(ids).toHaveLength(2);

    // Another transaction (an attempt record, say) holds the second row and will ask for the first.
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    cleanups.push(() => other.end());
    await other.query('begin');
    await other.query('update deliveries set last_error = null where id = $1', [ids[1]]);
    const renewal = store.outbox.renewLeases(ids, 'worker-a', new Date(now.getTime() + 3 * LEASE_MS));
    const answered = await Promise.race([renewal, sleep(5_000).then(() => 'still waiting')]);
    await other.query('update deliveries set last_error = null where id = $1', [ids[0]]);
    await other.query('commit');
    expect(answered).toEqual([ids[0]]);
  });
});

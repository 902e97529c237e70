// The delivery worker across a database outage (a real SQLite store whose writes fail meanwhile): a
// sent message is recorded once the database is back and never sent twice, even after its lease
// ran out; a worker stopped in the middle of a claim gives back what it claimed.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Channel, SendResult } from '../../src/delivery/channel.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { openDatabase } from '../../src/storage/database.js';
import type { DueDelivery, Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { type FreshDatabase, freshSqlite } from '../helpers/databases.js';

const LEASE_MS = 200;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Queues a claim code mail (a service message) for delivery now. */
const queueCode = (store: Store, id: string) =>
  store.outbox.enqueueMessage({ id, to: 'ada@example.com', subject: 'Your code', body: '123456' }, 'email', new Date());

interface Outage {
  /**
   * While set, every transaction (so every attempt record) and every lease renewal fails as if the
   * database were gone.
   */
  down: boolean;
  /** When set, a claim's result is handed to the worker only once this resolves. */
  holdClaim: ((claimed: readonly DueDelivery[]) => Promise<void>) | null;
  /** Transactions that reached the database (attempt records, while the database is up). */
  transactions: number;
}

/**
 * One queued message, a channel that counts sends and takes the database down right after the
 * first, and a worker with a short lease on the store.
 */
async function setUp(leaseMs = LEASE_MS) {
  const database: FreshDatabase = await freshSqlite();
  const store = createStore(await openDatabase(database.config));
  const outage: Outage = { down: false, holdClaim: null, transactions: 0 };
  const flaky: Store = {
    ...store,
    transaction: (work, options) => {
      if (outage.down) return Promise.reject(new Error('the database is down'));
      outage.transactions++;
      return store.transaction(work, options);
    },
    outbox: {
      ...store.outbox,
      async claimDue(now, limit, leaseMs, owner) {
        const claimed = await store.outbox.claimDue(now, limit, leaseMs, owner);
        await outage.holdClaim?.(claimed);
        return claimed;
      },
      async renewLeases(deliveryIds, owner, until) {
        if (outage.down) throw new Error('the database is down');
        return store.outbox.renewLeases(deliveryIds, owner, until);
      },
    },
  };
  const sent: string[] = [];
  const channel: Channel = {
    name: 'email',
    async send(delivery) {
      sent.push(delivery.id);
      outage.down = true;
      return { outcome: 'succeeded' };
    },
  };
  const worker = new DeliveryWorker({
    store: flaky,
    channels: [channel],
    logger: pino({ level: 'silent' }),
    leaseMs,
    pollIntervalMs: 20,
  });
  cleanups.push(async () => {
    await worker.stop();
    await store.close();
    await database.drop();
  });
  await queueCode(store, 'message-1');
  const succeeded = async () => (await store.outbox.countByStatus()).succeeded === 1;
  return { store, outage, sent, worker, succeeded };
}

describe('delivery worker during a database outage', () => {
  it('records a sent message once the database answers again, and sends it once', async () => {
    const { store, outage, sent, worker, succeeded } = await setUp();
    await worker.start();
    await until(() => sent.length === 1);
    // The outcome cannot be written; the lease runs out several times over meanwhile.
    await sleep(3 * LEASE_MS);
    expect(await store.outbox.countByStatus()).toMatchObject({ pending: 1, succeeded: 0 });
    outage.down = false;
    await until(succeeded);
    await sleep(3 * LEASE_MS);
    expect(sent).toHaveLength(1);
    expect((await store.outbox.attempts(sent[0] ?? '')).map((attempt) => attempt.outcome)).toEqual(['succeeded']);
  });

  it('does not send again a delivery its own claim leased again just before the outcome was recorded', async () => {
    const { outage, sent, worker, succeeded } = await setUp();
    await worker.start();
    await until(() => sent.length === 1);
    await sleep(2 * LEASE_MS); // the lease has run out
    // The database comes back while a claim runs: the claim leases the delivery again (its lease
    // has run out, and the lease is this worker's again), and the pending record commits before the
    // claim's result reaches the worker.
    let held = false;
    let recordedWhileHeld = false;
    outage.holdClaim = async (claimed) => {
      if (held || !claimed.some((item) => item.delivery.id === sent[0])) return;
      held = true;
      outage.down = false;
      const before = outage.transactions;
      await until(() => outage.transactions > before);
      await until(succeeded);
      recordedWhileHeld = true;
    };
    await until(() => held);
    await until(succeeded);
    await sleep(3 * LEASE_MS);
    expect(recordedWhileHeld).toBe(true);
    expect(sent).toHaveLength(1);
  });

  it('gives back at once what a claim leased while the worker was stopping', async () => {
    const { store, outage, sent, worker } = await setUp(60_000);
    let stopping: Promise<void> | undefined;
    outage.holdClaim = async (claimed) => {
      if (claimed.length > 0) stopping ??= worker.stop();
    };
    await worker.start();
    await until(() => stopping !== undefined);
    await stopping;
    expect(sent).toEqual([]);
    // Claimable now, not in a minute when the lease would have run out.
    expect(await store.outbox.claimDue(new Date(), 10, 60_000, 'another worker')).toHaveLength(1);
  });

  it("leaves the outcome to the worker that took a delivery over: the first one's late record is refused", async () => {
    const database = await freshSqlite();
    const opened = await openDatabase(database.config);
    const store = createStore(opened);
    const sends: string[] = [];
    // A send that hangs until released, then ends with `result`.
    const held = (name: string, result: SendResult) => {
      let release: () => void = () => {};
      const channel: Channel = {
        name: 'email',
        send: async () => {
          sends.push(name);
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return result;
        },
      };
      return { channel, release: () => release() };
    };
    const { channel: slow, release } = held('slow', { outcome: 'retry', error: 'timed out' });
    const { channel: later, release: releaseSecond } = held('second', { outcome: 'succeeded' });
    const options = { store, logger: pino({ level: 'silent' }), leaseMs: LEASE_MS, pollIntervalMs: 20 };
    // The first worker claims once, then neither claims nor renews (as if cut off from the
    // database): otherwise it would keep renewing the lease of its hanging send, which is what a
    // live worker does.
    let claims = 0;
    const cutOff: Store = {
      ...store,
      outbox: {
        ...store.outbox,
        claimDue: async (...args) => (claims++ === 0 ? store.outbox.claimDue(...args) : []),
        renewLeases: async () => {
          throw new Error('cut off from the database');
        },
      },
    };
    const first = new DeliveryWorker({ ...options, store: cutOff, channels: [slow] });
    const second = new DeliveryWorker({ ...options, channels: [later] });
    cleanups.push(async () => {
      release();
      releaseSecond();
      await first.stop();
      await second.stop();
      await store.close();
      await database.drop();
    });
    await queueCode(store, 'message-2');
    await first.start();
    await until(() => sends.length === 1);
    await sleep(2 * LEASE_MS); // the first worker's lease runs out while its send hangs
    await second.start();
    await until(() => sends.length === 2); // the second worker has taken it over and is sending
    release(); // the first send ends, late, with a failure: it must not touch the second's lease
    await first.stop();
    expect(await store.outbox.countByStatus()).toMatchObject({ pending: 1, succeeded: 0 });
    releaseSecond();
    await until(async () => (await store.outbox.countByStatus()).succeeded === 1);
    expect(sends).toEqual(['slow', 'second']);
    // One attempt on record, the second worker's: the first one's late failure was refused.
    const attempts = await opened.db.selectFrom('delivery_attempts').select(['attempt', 'outcome']).execute();
    expect(attempts).toEqual([{ attempt: 1, outcome: 'succeeded' }]);
  });
});

describe('delivery worker with sends waiting for a connection of their channel', () => {
  /**
   * Queued messages, a channel with one connection whose first send hangs until released, and a
   * worker with a short lease whose renewals fail while `renewals.down`.
   */
  async function setUpWaiting(messages: number) {
    const database = await freshSqlite();
    const store = createStore(await openDatabase(database.config));
    const renewals = { down: false, succeeded: 0 };
    const sent: string[] = [];
    const givenBack: string[] = [];
    let release: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    const channel: Channel = {
      name: 'email',
      concurrency: 1,
      async send(delivery) {
        sent.push(delivery.id);
        if (sent.length === 1) await hanging;
        return { outcome: 'succeeded' };
      },
    };
    const worker = new DeliveryWorker({
      store: {
        ...store,
        outbox: {
          ...store.outbox,
          async renewLeases(deliveryIds, owner, until) {
            if (renewals.down) throw new Error('the database is down');
            const renewed = await store.outbox.renewLeases(deliveryIds, owner, until);
            renewals.succeeded++;
            return renewed;
          },
          async releaseClaims(deliveryIds, owner) {
            givenBack.push(...deliveryIds);
            return store.outbox.releaseClaims(deliveryIds, owner);
          },
        },
      },
      channels: [channel],
      logger: pino({ level: 'silent' }),
      leaseMs: LEASE_MS,
      // It claims once: a claim of its own would lease again what it has in flight.
      pollIntervalMs: 60_000,
      pacer: null,
    });
    cleanups.push(async () => {
      release();
      await worker.stop();
      await store.close();
      await database.drop();
    });
    for (let i = 1; i <= messages; i++) {
      await queueCode(store, `message-${i}`);
    }
    return { store, renewals, sent, givenBack, worker, release: () => release() };
  }

  it('starts none that another worker took over while its renewals failed, once they succeed again', async () => {
    const { store, renewals, sent, worker, release } = await setUpWaiting(2);
    renewals.down = true;
    await worker.start();
    await until(() => sent.length === 1); // the first hangs; the second waits for the connection
    await sleep(2 * LEASE_MS); // the leases run out, unrenewed
    // Another worker takes both over (and sends them, as far as this one can tell).
    expect(await store.outbox.claimDue(new Date(), 10, 60_000, 'worker-b')).toHaveLength(2);
    renewals.down = false;
    const before = renewals.succeeded;
    await until(() => renewals.succeeded > before); // a renewal answers: it renewed neither
    release();
    await sleep(3 * LEASE_MS);
    expect(sent).toHaveLength(1);
  });

  it('started again while a stop is under way, waits for it and then renews the leases of what is still in flight', async () => {
    const { renewals, sent, worker } = await setUpWaiting(1);
    await worker.start();
    await until(() => sent.length === 1); // the send hangs
    const stopped = worker.stop(2 * LEASE_MS); // its grace runs out with the send still under way
    const restarted = worker.start();
    await stopped;
    await restarted;
    const before = renewals.succeeded;
    await sleep(2 * LEASE_MS);
    expect(renewals.succeeded).toBeGreaterThan(before);
  });

  it('stays stopped when stopped while starting', async () => {
    const database = await freshSqlite();
    const store = createStore(await openDatabase(database.config));
    let releasing: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      releasing = resolve;
    });
    const sent: string[] = [];
    const worker = new DeliveryWorker({
      store: { ...store, outbox: { ...store.outbox, releaseLeases: async () => released } },
      channels: [
        {
          name: 'email',
          send: async (delivery) => {
            sent.push(delivery.id);
            return { outcome: 'succeeded' };
          },
        },
      ],
      logger: pino({ level: 'silent' }),
      releaseLeasesOnStart: true,
      pollIntervalMs: 20,
      pacer: null,
    });
    cleanups.push(async () => {
      await worker.stop();
      await store.close();
      await database.drop();
    });
    await queueCode(store, 'message-1');
    const starting = worker.start(); // waits for the leases to be released
    await worker.stop();
    releasing();
    await starting;
    worker.wake();
    await sleep(5 * 20);
    expect(sent).toEqual([]);
  });

  it('on stop, starts none of those and gives them back at once, finishing only the send under way', async () => {
    const { store, sent, worker, release } = await setUpWaiting(3);
    await worker.start();
    await until(() => sent.length === 1);
    const stopped = worker.stop(10_000);
    await sleep(50);
    release(); // the send under way ends; its connection is free again
    await stopped;
    expect(sent).toHaveLength(1);
    expect(await store.outbox.countByStatus()).toMatchObject({ pending: 2, succeeded: 1 });
    // Claimable by another worker now, not once the lease has run out.
    expect(await store.outbox.claimDue(new Date(), 10, 60_000, 'worker-b')).toHaveLength(2);
  });

  it('on stop, gives back those waiting for a connection at once, while the send under way still runs', async () => {
    const { store, sent, givenBack, worker, release } = await setUpWaiting(3);
    await worker.start();
    await until(() => sent.length === 1);
    const stopped = worker.stop(10_000);
    await until(() => givenBack.length === 2, 2_000); // the first send still hangs
    expect(await store.outbox.claimDue(new Date(), 10, 60_000, 'worker-b')).toHaveLength(2);
    release();
    await stopped;
    expect(sent).toHaveLength(1);
  });
});

/** A store on a fresh SQLite file, closed and dropped after the test (after the cleanups pushed later). */
async function freshStore(): Promise<Store> {
  const database = await freshSqlite();
  const store = createStore(await openDatabase(database.config));
  cleanups.push(async () => {
    await store.close();
    await database.drop();
  });
  return store;
}

/** A channel whose every send succeeds, noting the delivery's id. */
const recording = (name: string, sent: string[]): Channel => ({
  name,
  async send(delivery) {
    sent.push(delivery.id);
    return { outcome: 'succeeded' };
  },
});

const message = (id: string) => ({ id, to: 'studio@example.com', subject: 'Inquiry', body: id });

describe('delivery worker with deliveries of a channel it is not configured with', () => {
  it('leaves them pending for an instance that has the channel, and says so once at start', async () => {
    const store = await freshStore();
    const lines: string[] = [];
    const sent: string[] = [];
    const worker = new DeliveryWorker({
      store,
      channels: [recording('email', sent)],
      logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }),
      pollIntervalMs: 20,
    });
    cleanups.push(() => worker.stop());
    await store.outbox.enqueueMessage(message('mail'), 'email', new Date());
    for (const id of ['hook-1', 'hook-2']) await store.outbox.enqueueMessage(message(id), 'webhook', new Date());
    await worker.start();
    await until(() => sent.length === 1);
    await sleep(100);
    expect(await store.outbox.countByChannelAndStatus()).toEqual(
      expect.arrayContaining([
        { channel: 'webhook', status: 'pending', count: 2 },
        { channel: 'email', status: 'succeeded', count: 1 },
      ]),
    );
    const warnings = lines.map((line) => JSON.parse(line) as { msg: string; channel?: string; pending?: number });
    expect(warnings.filter((line) => line.channel === 'webhook')).toEqual([
      expect.objectContaining({
        pending: 2,
        msg: '2 webhook deliveries are pending, but this instance has no webhook channel configured: they wait for one that has',
      }),
    ]);
  });
});

describe('delivery worker with a channel whose receiver hangs', () => {
  it('keeps delivering on the other channels: a channel holds only its own places', async () => {
    const store = await freshStore();
    const hanging: ((result: SendResult) => void)[] = [];
    const email: Channel = {
      name: 'email',
      concurrency: 4, // pooled connections: the other claimed mails wait in the worker
      send: () => new Promise<SendResult>((resolve) => hanging.push(resolve)),
    };
    const delivered: string[] = [];
    const webhook = recording('webhook', delivered);
    const worker = new DeliveryWorker({ store, channels: [email, webhook], logger: pino({ level: 'silent' }), pollIntervalMs: 20 });
    cleanups.push(async () => {
      for (const resolve of hanging) resolve({ outcome: 'retry', error: 'the test ended' });
      await worker.stop();
    });
    // The mails are the oldest due: claimed by age alone, they filled every place of the worker.
    for (let i = 0; i < 60; i++) await store.outbox.enqueueMessage(message(`mail-${i}`), 'email', new Date(Date.now() - 60_000 + i));
    for (let i = 0; i < 60; i++) await store.outbox.enqueueMessage(message(`hook-${i}`), 'webhook', new Date());
    await worker.start();
    await until(() => delivered.length === 60, 5_000);
    // Sent, and then recorded (the records are group-committed after the sends).
    await until(async () => (await store.outbox.countByStatus()).succeeded === 60, 5_000);
    expect(hanging).toHaveLength(4); // the mail server holds its four connections, and only those
    expect(await store.outbox.countByStatus()).toMatchObject({ pending: 60, succeeded: 60 });
  });
});

describe('delivery worker with a send that fails for now', () => {
  it('sends it again once its retry is due', async () => {
    const store = await freshStore();
    const sent: string[] = [];
    const channel: Channel = {
      name: 'email',
      async send(delivery) {
        sent.push(delivery.id);
        return sent.length === 1 ? { outcome: 'retry', error: 'try again' } : { outcome: 'succeeded' };
      },
    };
    const worker = new DeliveryWorker({
      store,
      channels: [channel],
      logger: pino({ level: 'silent' }),
      retry: { baseMs: 20, capMs: 20, windowMs: 60_000 }, // due again 10 to 20 ms after it failed
      pollIntervalMs: 20,
      pacer: null,
    });
    cleanups.push(() => worker.stop());
    await store.outbox.enqueueMessage(message('mail'), 'email', new Date());
    await worker.start();
    await until(async () => (await store.outbox.countByStatus()).succeeded === 1, 5_000);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]);
    expect((await store.outbox.attempts(sent[0] ?? '')).map((attempt) => attempt.outcome)).toEqual(['retry', 'succeeded']);
  });
});

// Intake first (src/delivery/pacing.ts): while inquiries arrive faster than the threshold, delivery
// starts at most its paced rate, in chunks, and never stops; below the threshold and once a burst is
// over, nothing is paced. The pacer on a fake clock; then the worker on a real SQLite outbox.
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/delivery/channel.js';
import { DEFAULT_PACE, DeliveryPacer, PACE_WINDOW_MS, type PaceOptions } from '../../src/delivery/pacing.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { type FreshDatabase, freshSqlite } from '../helpers/databases.js';

/** The production pace: above 100 inquiries/s, 10 deliveries/s in chunks of 5. */
const PACE: PaceOptions = DEFAULT_PACE;
/** Time for the production pace to save up one chunk. */
const CHUNK_MS = (PACE.chunk * 1000) / PACE.pacedPerS;

function pacerOnAClock(options: PaceOptions = PACE) {
  const clock = { ms: 1_000 };
  const pacer = new DeliveryPacer(options, () => clock.ms);
  /** `count` inquiries spread evenly over `ms`. */
  const intake = (count: number, ms: number) => {
    for (let i = 0; i < count; i++) {
      clock.ms += ms / count;
      pacer.noteIntake();
    }
  };
  return { clock, pacer, intake };
}

describe('delivery pacer', () => {
  it('has the production pace docs/delivery.md describes', () => {
    expect(DEFAULT_PACE).toEqual({ busyAbovePerS: 100, pacedPerS: 10, chunk: 5 });
  });

  it('paces nothing while intake stays at or below the threshold', () => {
    const { pacer, intake } = pacerOnAClock();
    for (let second = 0; second < 5; second++) {
      intake(100, 1_000);
      expect(pacer.busy()).toBe(false);
      expect(pacer.allowance()).toBe(Number.POSITIVE_INFINITY);
    }
  });

  it('above it, allows a chunk, then nothing until the paced rate has saved up the next chunk', () => {
    const { clock, pacer, intake } = pacerOnAClock();
    intake(40, 200);
    expect(pacer.busy()).toBe(true);
    expect(pacer.allowance()).toBe(PACE.chunk);
    pacer.spend(PACE.chunk);
    expect(pacer.allowance()).toBe(0);
    expect(pacer.nextChunkInMs()).toBe(CHUNK_MS); // 5 at 10/s: 500 ms
    intake(CHUNK_MS / 5, CHUNK_MS / 2); // still busy (400 a second); half a chunk saved
    expect(pacer.allowance()).toBe(0);
    expect(pacer.nextChunkInMs()).toBe(CHUNK_MS / 2);
    clock.ms += CHUNK_MS / 2;
    pacer.noteIntake();
    expect(pacer.allowance()).toBe(PACE.chunk);
  });

  it('lifts the pace from the second window after the one of the last inquiry on, whenever it is asked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 2 * PACE_WINDOW_MS }), (offset, askAfter) => {
        const { clock, pacer, intake } = pacerOnAClock();
        clock.ms += offset;
        intake(500, 1_000);
        const lastWindow = Math.floor(clock.ms / PACE_WINDOW_MS);
        pacer.spend(pacer.allowance());
        expect(pacer.allowance()).toBe(0);
        clock.ms += askAfter;
        const window = Math.floor(clock.ms / PACE_WINDOW_MS);
        // Busy in its own window (the one before held ~125 inquiries); from two windows on, never.
        if (window === lastWindow) expect(pacer.busy()).toBe(true);
        if (window >= lastWindow + 2) expect(pacer.allowance()).toBe(Number.POSITIVE_INFINITY);
      }),
    );
  });

  it('does not count a burst long past: a lone inquiry an hour later is not busy', () => {
    const { clock, pacer, intake } = pacerOnAClock();
    clock.ms += 100; // the burst ends in the middle of a window
    intake(500, 1_000);
    expect(pacer.busy()).toBe(true);
    clock.ms += 3_600_000;
    pacer.noteIntake();
    expect(pacer.busy()).toBe(false);
  });

  it("paces for all instances' intake as for its own: a count above the threshold holds for its window and the next", () => {
    const { clock, pacer, intake } = pacerOnAClock();
    const threshold = (PACE.busyAbovePerS * PACE_WINDOW_MS) / 1000; // 25 in a window
    expect(pacer.sharedCountLimit()).toBe(threshold + 1);
    expect(pacer.sharedCountDue()).toBe(true);
    pacer.noteSharedIntake(threshold + 1);
    expect(pacer.busy()).toBe(true);
    expect(pacer.allowance()).toBe(PACE.chunk);
    expect(pacer.sharedCountDue()).toBe(false); // busy: nothing to count
    clock.ms += PACE_WINDOW_MS;
    expect(pacer.busy()).toBe(true);
    clock.ms += PACE_WINDOW_MS;
    expect(pacer.busy()).toBe(false);
    expect(pacer.allowance()).toBe(Number.POSITIVE_INFINITY);

    // At the threshold, not busy; counted once a window.
    expect(pacer.sharedCountDue()).toBe(true);
    pacer.noteSharedIntake(threshold);
    expect(pacer.busy()).toBe(false);
    expect(pacer.sharedCountDue()).toBe(false);
    clock.ms += PACE_WINDOW_MS;
    expect(pacer.sharedCountDue()).toBe(true);

    // Busy with its own intake, it does not count the others'.
    intake(40, 200);
    expect(pacer.sharedCountDue()).toBe(false);
  });

  it('in any busy stretch, starts at most a chunk plus the paced rate, and never stalls for longer than a chunk takes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ ms: fc.integer({ min: 1, max: 120 }), inquiries: fc.integer({ min: 30, max: 400 }) }), {
          minLength: 1,
          maxLength: 60,
        }),
        (steps) => {
          const { clock, pacer, intake } = pacerOnAClock();
          intake(50, 100); // busy from here on: every step keeps intake above the threshold
          const start = clock.ms;
          let started = 0;
          let lastStart = clock.ms;
          for (const step of steps) {
            intake(Math.ceil((step.inquiries * step.ms) / 1000) + 30, step.ms);
            expect(pacer.busy()).toBe(true);
            const allowed = pacer.allowance();
            expect(Number.isFinite(allowed)).toBe(true);
            if (allowed > 0) {
              pacer.spend(allowed);
              started += allowed;
              lastStart = clock.ms;
            }
            const elapsed = clock.ms - start;
            expect(started).toBeLessThanOrEqual(PACE.chunk + (PACE.pacedPerS * elapsed) / 1000);
            // A chunk is due every chunk/rate = 500 ms; a step may overshoot that by its own length.
            expect(clock.ms - lastStart).toBeLessThanOrEqual(CHUNK_MS + 120);
          }
        },
      ),
    );
  });
});

describe('delivery worker under a burst of intake', () => {
  /** Five times the production rate, so that one second of burst shows whether the worker keeps it. */
  const FAST_PACE: PaceOptions = { ...PACE, pacedPerS: 50 };

  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  /** An inquiry received now (by another instance, as far as the worker knows). */
  const justReceived = (reference: string) => ({
    inquiry: {
      reference,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      company: null,
      message: reference,
      clientId: null,
      receivedAt: new Date(),
      source: 'api' as const,
    },
    fingerprint: reference,
  });

  /** A worker on `store` whose channel notes when it sends, and `messages` queued messages for it. */
  async function workerWithMessages(store: Store, database: FreshDatabase, messages: number, pacer: DeliveryPacer | null) {
    const sentAt: number[] = [];
    const channel: Channel = {
      name: 'email',
      async send() {
        sentAt.push(performance.now());
        return { outcome: 'succeeded' };
      },
    };
    const worker = new DeliveryWorker({ store, channels: [channel], logger: pino({ level: 'silent' }), pacer });
    cleanup = async () => {
      await worker.stop();
      await store.close();
      await database.drop();
    };
    for (let i = 0; i < messages; i++)
      await store.outbox.enqueueMessage(
        { id: `message-${i}`, to: 'ada@example.com', subject: 'Your code', body: String(i) },
        'email',
        new Date(),
      );
    return { worker, sentAt };
  }

  /**
   * 300 queued messages on a real SQLite outbox; for one second intake far above the threshold is
   * reported to the worker, or (`elsewhere`) written to the shared database as another instance's.
   */
  async function burst(
    pace: PaceOptions | null,
    { during, elsewhere = false }: { during?: (worker: DeliveryWorker) => Promise<void>; elsewhere?: boolean } = {},
  ) {
    const database = await freshSqlite();
    const store = createStore(await openDatabase(database.config));
    // The poll interval is the production one, so the paced rate cannot come from polling.
    const { worker, sentAt } = await workerWithMessages(store, database, 300, pace && new DeliveryPacer(pace));

    let received = 0;
    const inquiriesElsewhere = () => Array.from({ length: 20 }, () => justReceived(`INQ-${String(++received).padStart(6, '0')}`));
    const writes: Promise<unknown>[] = [];
    const report = () => {
      // 20 per 10 ms: 2,000 inquiries a second
      if (elsewhere) writes.push(store.inquiries.insertMany(inquiriesElsewhere()));
      else for (let i = 0; i < 20; i++) worker.enqueued();
    };
    // The burst is under way when the worker starts (enqueued() counts before it runs, too).
    report();
    report();
    const start = performance.now();
    const intake = setInterval(report, 10);
    await worker.start();
    await sleep(1_000);
    await during?.(worker);
    clearInterval(intake);
    await Promise.all(writes);
    const burstEnd = performance.now();
    const duringBurst = sentAt.length;
    const deadline = Date.now() + 10_000;
    while ((await store.outbox.countByStatus()).succeeded < 300 && Date.now() < deadline) await sleep(20);
    return { duringBurst, burstMs: burstEnd - start, afterBurstMs: performance.now() - burstEnd, sent: sentAt.length };
  }

  it('keeps mailing at the paced rate during the burst, and sends the rest as soon as it ends', async () => {
    const pace = FAST_PACE;
    const { duringBurst, burstMs, afterBurstMs, sent } = await burst(pace);
    expect(duringBurst).toBeLessThanOrEqual(pace.chunk + (pace.pacedPerS * burstMs) / 1000);
    expect(duringBurst).toBeGreaterThanOrEqual(30); // about 50 in the second: never stalled, not waiting for the poll
    expect(sent).toBe(300);
    expect(afterBurstMs).toBeLessThan(5_000);
  });

  it('stopped and started again while paced, picks the pace up again and sends everything after the burst', async () => {
    const { duringBurst, sent } = await burst(FAST_PACE, {
      during: async (worker) => {
        await worker.stop();
        await worker.start();
        await sleep(500);
      },
    });
    expect(duringBurst).toBeGreaterThanOrEqual(40);
    expect(duringBurst).toBeLessThan(300);
    expect(sent).toBe(300);
  });

  it('paces as well while the burst arrives at another instance on the same database, then sends the rest', async () => {
    const pace = FAST_PACE;
    const { duringBurst, burstMs, afterBurstMs, sent } = await burst(pace, { elsewhere: true });
    // One claim at full concurrency (32) may go out before the worker sees a backlog and counts;
    // then about 50 in the second: paced, never stalled.
    expect(duringBurst).toBeLessThanOrEqual(32 + pace.chunk + (pace.pacedPerS * burstMs) / 1000);
    expect(duringBurst).toBeGreaterThanOrEqual(32 + 25);
    expect(sent).toBe(300);
    expect(afterBurstMs).toBeLessThan(2_500); // the pace lifted: the rest did not trickle out at 50/s
  });

  /** 100 queued messages, 40 inquiries just received elsewhere, and a worker whose count of them is `count`. */
  async function sharedStore(count: (original: () => Promise<number>) => Promise<number>) {
    const database = await freshSqlite();
    const real = createStore(await openDatabase(database.config));
    const store: Store = {
      ...real,
      inquiries: { ...real.inquiries, countReceivedSince: (since, limit) => count(() => real.inquiries.countReceivedSince(since, limit)) },
    };
    const { worker, sentAt } = await workerWithMessages(store, database, 100, new DeliveryPacer(PACE));
    await real.inquiries.insertMany(Array.from({ length: 40 }, (_, i) => justReceived(`INQ-EEEE${String(i).padStart(2, '0')}`)));
    const allSent = async () => {
      const deadline = Date.now() + 5_000;
      while (sentAt.length < 100 && Date.now() < deadline) await sleep(20);
      return sentAt.length;
    };
    return { worker, allSent };
  }

  it('takes a failing count as none: delivery carries on unpaced', async () => {
    const { worker, allSent } = await sharedStore(() => Promise.reject(new Error('the count failed')));
    await worker.start();
    expect(await allSent()).toBe(100);
  });

  it('stopped while counting and started again, sends everything', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let counting = false;
    const { worker, allSent } = await sharedStore(async (original) => {
      counting = true;
      await gate;
      return original();
    });
    await worker.start();
    while (!counting) await sleep(5);
    const stopping = worker.stop();
    release();
    await stopping;
    await worker.start();
    expect(await allSent()).toBe(100);
  });

  it('without a pace, the same burst does not hold delivery back', async () => {
    const { duringBurst, sent } = await burst(null);
    expect(duringBurst).toBe(300);
    expect(sent).toBe(300);
  });
});

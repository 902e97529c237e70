// The claim loop (src/delivery/claiming.ts) on fake parts: it claims what its channels have room
// for, claims again after a wake-up during a claim or a full claim, gives back what it must not
// send, polls, waits for the pace, and says an unreadable outbox once per outage.
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClaimLoop, type ClaimLoopOptions, warnOfOtherChannels } from '../../src/delivery/claiming.js';
import { ClaimPacing, DeliveryPacer } from '../../src/delivery/pacing.js';
import type { OpenChannel } from '../../src/delivery/slots.js';
import type { DueDelivery } from '../../src/storage/ports.js';

/** Stops each loop a test made, as its worker would (not running, then halted): no poll is left. */
let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops) await stop();
  stops = [];
  vi.useRealTimers();
});

function due(id: string, channel = 'email'): DueDelivery {
  const queuedAt = new Date(0);
  return {
    delivery: {
      id,
      reference: null,
      channel,
      status: 'pending',
      attempts: 0,
      runAt: queuedAt,
      lastError: null,
      queuedAt,
      finishedAt: null,
    },
    payload: { kind: 'message', message: { id, to: 'ada@example.com', subject: 'Your code', body: '123456' } },
  };
}

/**
 * A claim loop over a fake outbox holding `queued` (claimed oldest first, per channel, up to the
 * capacity asked), with the parts it is handed recorded.
 */
function loopOver(queued: DueDelivery[], overrides: Partial<ClaimLoopOptions> = {}) {
  const state = {
    running: true,
    open: [{ name: 'email', free: 4 }] as OpenChannel[],
    claimFails: false,
    /** While set, a claim answers only once it resolves. */
    hold: undefined as Promise<void> | undefined,
  };
  const claims: ReadonlyMap<string, number>[] = [];
  const launched: string[] = [];
  const givenBack: string[] = [];
  const held = new Map<string, number>();
  const lines: { level: number; msg: string }[] = [];
  const options: ClaimLoopOptions = {
    isRunning: () => state.running,
    openChannels: () => state.open,
    pacing: new ClaimPacing({ pacer: null, countReceivedSince: async () => 0, now: () => new Date() }),
    async claimDue(capacity) {
      claims.push(new Map(capacity));
      if (state.claimFails) throw new Error('the database is down');
      const got: DueDelivery[] = [];
      for (const [channel, count] of capacity) {
        const ofChannel = queued.filter((item) => item.delivery.channel === channel).slice(0, count);
        for (const item of ofChannel) queued.splice(queued.indexOf(item), 1);
        got.push(...ofChannel);
      }
      await state.hold;
      return got;
    },
    leases: { has: (id) => held.has(id), hold: (id, claimedAt) => void held.set(id, claimedAt) },
    launch: (item) => void launched.push(item.delivery.id),
    giveBack: async (ids) => void givenBack.push(...ids),
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    pollIntervalMs: 1_000,
    ...overrides,
  };
  const loop = new ClaimLoop(options);
  stops.push(async () => {
    state.running = false;
    await loop.settled();
  });
  return { loop, state, claims, launched, givenBack, held, lines };
}

describe('claim loop', () => {
  it('claims for each open channel as many as it has free places, and launches them', async () => {
    const { loop, state, claims, launched } = loopOver([due('m1'), due('m2'), due('h1', 'webhook')]);
    state.open = [
      { name: 'email', free: 4 },
      { name: 'webhook', free: 2 },
    ];
    loop.wake();
    await loop.settled();
    expect(claims[0]).toEqual(
      new Map([
        ['email', 4],
        ['webhook', 2],
      ]),
    );
    expect(launched).toEqual(['m1', 'm2', 'h1']);
    expect(claims).toHaveLength(1); // short of what it asked for: nothing more due
  });

  it('claims nothing while not running, or while no channel has room', async () => {
    const { loop, state, claims } = loopOver([due('m1')]);
    state.running = false;
    loop.wake();
    state.running = true;
    state.open = [];
    loop.wake();
    await loop.settled();
    expect(claims).toEqual([]);
  });

  it('claims once more after wake-ups that came during a claim', async () => {
    const queued = [due('m1')];
    const { loop, state, claims, launched } = loopOver(queued);
    let answer: () => void = () => {};
    state.hold = new Promise<void>((resolve) => (answer = resolve));
    loop.wake();
    loop.wake();
    loop.wake();
    expect(claims).toHaveLength(1);
    queued.push(due('m2')); // due after the claim read the outbox: the next claim finds it
    state.hold = undefined;
    answer();
    await loop.settled();
    expect(claims).toHaveLength(2);
    expect(launched).toEqual(['m1', 'm2']);
  });

  it('claims again while each claim gets all it asked for: more may be due', async () => {
    const { loop, state, claims, launched } = loopOver(Array.from({ length: 5 }, (_, i) => due(`m${i}`)));
    state.open = [{ name: 'email', free: 2 }];
    loop.wake();
    await loop.settled();
    expect(claims).toHaveLength(3);
    expect(launched).toHaveLength(5);
  });

  it('does not launch again a delivery it has in flight: the claim only renewed its lease', async () => {
    const { loop, launched, held, givenBack } = loopOver([due('m1'), due('m2')]);
    held.set('m1', 0);
    loop.wake();
    await loop.settled();
    expect(launched).toEqual(['m2']);
    expect(held.get('m1')).toBeGreaterThan(0);
    expect(givenBack).toEqual([]);
  });

  it('gives back at once a delivery whose attempt was recorded while the claim ran', async () => {
    const queued = [due('m1'), due('m2')];
    const parts = loopOver(queued, {
      claimDue: async () => {
        parts.loop.noteRecorded('m1'); // recorded before the claim's answer came back
        return queued.splice(0);
      },
    });
    parts.loop.noteRecorded('m2'); // recorded before the claim started: no matter
    parts.loop.wake();
    await parts.loop.settled();
    expect(parts.launched).toEqual(['m2']);
    expect(parts.givenBack).toEqual(['m1']);
  });

  it('sends a delivery recorded during an earlier claim when a later claim gets it', async () => {
    let claimed = 0;
    const parts = loopOver([], {
      claimDue: async () => {
        claimed++;
        if (claimed === 1) {
          parts.loop.noteRecorded('r'); // an earlier attempt of r (a retry) recorded meanwhile
          return [due('m1')]; // all it asked for: it claims again
        }
        return claimed === 2 ? [due('r')] : []; // r is due again
      },
    });
    parts.state.open = [{ name: 'email', free: 1 }];
    parts.loop.wake();
    await parts.loop.settled();
    expect(parts.launched).toEqual(['m1', 'r']);
    expect(parts.givenBack).toEqual([]);
  });

  it('gives back at once all a claim got when the worker stopped while it ran', async () => {
    const queued = [due('m1'), due('m2')];
    const parts = loopOver(queued, {
      claimDue: async () => {
        parts.state.running = false;
        return queued.splice(0);
      },
    });
    parts.loop.wake();
    await parts.loop.halt();
    expect(parts.launched).toEqual([]);
    expect(parts.givenBack).toEqual(['m1', 'm2']);
  });

  it('looks again every poll interval while nothing wakes it, and no more once halted', async () => {
    vi.useFakeTimers();
    const queued: DueDelivery[] = [];
    const { loop, state, claims, launched } = loopOver(queued);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    queued.push(due('retry-due'));
    await vi.advanceTimersByTimeAsync(999);
    expect(launched).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(launched).toEqual(['retry-due']);
    state.running = false;
    await loop.halt();
    expect(vi.getTimerCount()).toBe(0); // the next poll was called off
    await vi.advanceTimersByTimeAsync(5_000);
    expect(claims).toHaveLength(2);
  });

  it('says an unreadable outbox once per outage, keeps polling, and says when it reads it again', async () => {
    vi.useFakeTimers();
    const { loop, state, claims, lines } = loopOver([]);
    state.claimFails = true;
    loop.wake();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(claims).toHaveLength(4);
    expect(lines.map((line) => line.msg)).toEqual(['delivery worker could not read the outbox; will retry']);
    state.claimFails = false;
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lines.map((line) => line.msg)).toEqual([
      'delivery worker could not read the outbox; will retry',
      'delivery worker reads the outbox again',
    ]);
    expect(lines.map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: 50, msg: 'delivery worker could not read the outbox; will retry' }, // error
      { level: 30, msg: 'delivery worker reads the outbox again' }, // info
    ]);
    state.running = false;
    await loop.halt();
  });

  it('while the pace allows none, waits for the next chunk and lets no wake-up claim before it', async () => {
    vi.useFakeTimers();
    const clock = { ms: 1_000 };
    const pacer = new DeliveryPacer({ busyAbovePerS: 100, pacedPerS: 10, chunk: 5 }, () => clock.ms);
    for (let i = 0; i < 50; i++) pacer.noteIntake(); // a burst: paced
    const queued = Array.from({ length: 20 }, (_, i) => due(`m${i}`));
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    const looks = vi.spyOn(pacing, 'shares');
    const { loop, state, claims, launched } = loopOver(queued, { pacing });
    state.open = [{ name: 'email', free: 32 }];
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(launched).toHaveLength(5); // one chunk
    expect(claims).toHaveLength(1);
    expect(looks).toHaveBeenCalledTimes(2); // the chunk, then none allowed
    loop.wake(); // ignored: paced
    await vi.advanceTimersByTimeAsync(0);
    expect(looks).toHaveBeenCalledTimes(2);
    expect(claims).toHaveLength(1);
    clock.ms += 250; // still bursting in the next window
    for (let i = 0; i < 50; i++) pacer.noteIntake();
    clock.ms += 250;
    await vi.advanceTimersByTimeAsync(499);
    expect(claims).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1); // the next chunk is saved up
    expect(claims).toHaveLength(2);
    expect(launched).toHaveLength(10);
    state.running = false;
    await loop.halt();
  });

  it('after a claim that got all it asked for, counts the intake of all instances before the next', async () => {
    const counted: { limit: number; claimsBefore: number }[] = [];
    const pacer = new DeliveryPacer();
    const queued = Array.from({ length: 6 }, (_, i) => due(`m${i}`));
    const parts = loopOver(queued, {
      pacing: new ClaimPacing({
        pacer,
        countReceivedSince: async (_since, limit) => {
          counted.push({ limit, claimsBefore: parts.claims.length });
          return 0;
        },
        now: () => new Date(),
      }),
    });
    parts.state.open = [{ name: 'email', free: 4 }];
    parts.loop.wake();
    await parts.loop.settled();
    // Before the second claim, not the first.
    expect(counted).toEqual([{ limit: pacer.sharedCountLimit(), claimsBefore: 1 }]);
  });

  it('claims nothing more when the worker stopped while it counted the intake of all instances', async () => {
    const queued = Array.from({ length: 6 }, (_, i) => due(`m${i}`));
    const parts = loopOver(queued, {
      pacing: new ClaimPacing({
        pacer: new DeliveryPacer(),
        countReceivedSince: async () => {
          parts.state.running = false;
          return 0;
        },
        now: () => new Date(),
      }),
    });
    parts.state.open = [{ name: 'email', free: 4 }];
    parts.loop.wake();
    await parts.loop.settled();
    expect(parts.claims).toHaveLength(1);
    expect(parts.launched).toHaveLength(4);
    expect(parts.givenBack).toEqual([]);
  });

  it('halted while paced and started again, claims at the next wake-up once the pace allows', async () => {
    vi.useFakeTimers();
    const clock = { ms: 1_000 };
    const pacer = new DeliveryPacer({ busyAbovePerS: 100, pacedPerS: 10, chunk: 5 }, () => clock.ms);
    for (let i = 0; i < 50; i++) pacer.noteIntake(); // a burst: paced
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    const { loop, state, claims, launched } = loopOver(
      Array.from({ length: 20 }, (_, i) => due(`m${i}`)),
      { pacing },
    );
    state.open = [{ name: 'email', free: 32 }];
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(claims).toHaveLength(1); // one chunk, then waits for the pace
    state.running = false;
    await loop.halt();
    state.running = true; // started again
    clock.ms += 1_000; // the burst is over
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(claims).toHaveLength(2);
    expect(launched).toHaveLength(20);
  });

  it('halted while a claim runs, is done once that claim is, and looks no more once stopped', async () => {
    vi.useFakeTimers();
    const { loop, state, claims, launched } = loopOver([due('m1')]);
    expect(loop.halt()).toBeUndefined(); // never ran
    let answer: () => void = () => {};
    state.hold = new Promise<void>((resolve) => (answer = resolve));
    loop.wake();
    state.running = false;
    let done = false;
    const halted = loop.halt()?.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    answer();
    await halted;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(claims).toHaveLength(1);
    expect(launched).toEqual([]); // stopped: given back instead
  });
});

describe('deliveries of a channel this instance does not have', () => {
  const logged = () => {
    const lines: { msg: string; channel?: string; pending?: number }[] = [];
    return { lines, logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
  };

  it('are said once with their count; those of its own channels, and finished ones, are not', async () => {
    const { lines, logger } = logged();
    const outbox = {
      countByChannelAndStatus: async () => [
        { channel: 'email', status: 'pending' as const, count: 3 },
        { channel: 'webhook', status: 'pending' as const, count: 2 },
        { channel: 'webhook', status: 'succeeded' as const, count: 9 },
        { channel: 'fax', status: 'pending' as const, count: 0 },
      ],
    };
    await warnOfOtherChannels(outbox, new Set(['email']), logger);
    expect(lines).toEqual([
      expect.objectContaining({
        channel: 'webhook',
        pending: 2,
        msg: '2 webhook deliveries are pending, but this instance has no webhook channel configured: they wait for one that has',
      }),
    ]);
  });

  it('are not mentioned when they cannot be counted', async () => {
    const { lines, logger } = logged();
    await warnOfOtherChannels({ countByChannelAndStatus: () => Promise.reject(new Error('down')) }, new Set(), logger);
    expect(lines).toEqual([]);
  });
});

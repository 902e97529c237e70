// The pacer as the claim loop uses it (ClaimPacing, src/delivery/pacing.ts): each open channel's
// share of the allowance, fair between channels, and the count of all instances' intake.
import { describe, expect, it } from 'vitest';
import { ClaimPacing, DEFAULT_PACE, DeliveryPacer, PACE_WINDOW_MS } from '../../src/delivery/pacing.js';

const open = (...channels: [string, number][]) => channels.map(([name, free]) => ({ name, free }));

/** A pacer on a clock the test moves, busy (a burst noted) unless `busy` is false. */
function pacedAt(busy = true) {
  const clock = { ms: 1_000 };
  const pacer = new DeliveryPacer({ busyAbovePerS: 100, pacedPerS: 10, chunk: 5 }, () => clock.ms);
  if (busy) for (let i = 0; i < 50; i++) pacer.noteIntake();
  return { clock, pacer };
}

describe('claim pacing', () => {
  it('without a pacer, gives each open channel its free places, and never counts or waits', () => {
    const pacing = new ClaimPacing({ pacer: null, countReceivedSince: async () => 0, now: () => new Date() });
    expect(pacing.shares(open(['email', 16], ['webhook', 32]))).toEqual(
      new Map([
        ['email', 16],
        ['webhook', 32],
      ]),
    );
    expect(pacing.sharedCountDue()).toBe(false);
    expect(pacing.nextChunkInMs()).toBeUndefined();
  });

  it('below the threshold, gives each open channel its free places', () => {
    const { pacer } = pacedAt(false);
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    expect(pacing.shares(open(['email', 16]))).toEqual(new Map([['email', 16]]));
  });

  it('while paced, shares a chunk evenly, the odd one going round the channels claim after claim', () => {
    const { clock, pacer } = pacedAt();
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    const channels = open(['email', 32], ['webhook', 32]);
    expect(pacing.shares(channels)).toEqual(
      new Map([
        ['email', 3],
        ['webhook', 2],
      ]),
    );
    pacing.spend(5);
    clock.ms += 500;
    for (let i = 0; i < 50; i++) pacer.noteIntake(); // still bursting
    expect(pacing.shares(channels)).toEqual(
      new Map([
        ['webhook', 3],
        ['email', 2],
      ]),
    );
  });

  it('while paced, once a chunk is spent, shares none until the next is saved up', () => {
    const { clock, pacer } = pacedAt();
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    expect(pacing.shares(open(['email', 32]))).toEqual(new Map([['email', 5]]));
    pacing.spend(5);
    expect(pacing.shares(open(['email', 32]))).toEqual(new Map());
    expect(pacing.nextChunkInMs()).toBe(500);
    clock.ms += 250;
    for (let i = 0; i < 50; i++) pacer.noteIntake(); // still bursting
    expect(pacing.shares(open(['email', 32]))).toEqual(new Map());
    expect(pacing.nextChunkInMs()).toBe(250);
  });

  it('gives a channel no more than its free places, and leaves out one with no share', () => {
    const { pacer } = pacedAt();
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    expect(pacing.shares(open(['email', 1], ['webhook', 32], ['sms', 32], ['fax', 32], ['pager', 32], ['telex', 32]))).toEqual(
      new Map([
        ['email', 1],
        ['webhook', 1],
        ['sms', 1],
        ['fax', 1],
        ['pager', 1],
      ]),
    );
  });

  it('shares nothing when no channel is open, and goes on round the channels after', () => {
    const { pacer } = pacedAt();
    const pacing = new ClaimPacing({ pacer, countReceivedSince: async () => 0, now: () => new Date() });
    expect(pacing.shares([])).toEqual(new Map());
    expect(pacing.shares(open(['email', 32], ['webhook', 32]))).toEqual(
      new Map([
        ['email', 3],
        ['webhook', 2],
      ]),
    );
  });

  it("counts all instances' intake over the last window, up to one past the threshold; above it, paces", async () => {
    const { pacer } = pacedAt(false);
    const asked: { since: Date; limit: number }[] = [];
    const pacing = new ClaimPacing({
      pacer,
      countReceivedSince: async (since, limit) => {
        asked.push({ since, limit });
        return limit;
      },
      now: () => new Date(60_000),
    });
    expect(pacing.sharedCountDue()).toBe(true);
    await pacing.countSharedIntake();
    expect(asked).toEqual([{ since: new Date(60_000 - PACE_WINDOW_MS), limit: pacer.sharedCountLimit() }]);
    expect(pacer.busy()).toBe(true);
    expect(pacing.sharedCountDue()).toBe(false);
  });

  it('takes a count that fails as none: delivery goes on unpaced', async () => {
    const { pacer } = pacedAt(false);
    const pacing = new ClaimPacing({ pacer, countReceivedSince: () => Promise.reject(new Error('down')), now: () => new Date() });
    await pacing.countSharedIntake();
    expect(pacer.busy()).toBe(false);
    expect(pacing.sharedCountDue()).toBe(false); // counted for this window
    expect(pacing.shares(open(['email', 32]))).toEqual(new Map([['email', 32]]));
  });

  it('uses the production pace by default', () => {
    const pacer = new DeliveryPacer();
    expect(pacer.sharedCountLimit()).toBe((DEFAULT_PACE.busyAbovePerS * PACE_WINDOW_MS) / 1000 + 1);
  });
});

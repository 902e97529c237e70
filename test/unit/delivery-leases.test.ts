// Lease renewal (src/delivery/leases.ts) on a fake clock and a fake store: only the deliveries in
// flight are renewed, only those renewed move on, one renewal at a time, a failure said once, and a
// send may start only while a third of its lease is left.
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeldLeases, RENEWALS_PER_LEASE } from '../../src/delivery/leases.js';

const LEASE_MS = 300;

afterEach(() => {
  vi.useRealTimers();
});

/** Leases on a monotonic clock the test moves, renewed through `renew` (by default: all of them). */
function leasesOnAClock(renew: (ids: readonly string[], until: Date) => Promise<string[]> = async (ids) => [...ids]) {
  const clock = { ms: 10_000 };
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const calls: { ids: readonly string[]; until: Date }[] = [];
  const leases = new HeldLeases({
    leaseMs: LEASE_MS,
    now: () => new Date(1_000_000),
    logger,
    monotonic: () => clock.ms,
    renew: (ids, until) => {
      calls.push({ ids, until });
      return renew(ids, until);
    },
  });
  return { clock, leases, calls, lines };
}

describe('held leases', () => {
  it('lets a send start while at least a third of the lease is left, counted from the claim', () => {
    const { clock, leases } = leasesOnAClock();
    leases.hold('a', clock.ms);
    expect(leases.has('a')).toBe(true);
    clock.ms += (2 * LEASE_MS) / 3;
    expect(leases.stillHeld('a')).toBe(true);
    clock.ms += 1;
    expect(leases.stillHeld('a')).toBe(false);
  });

  it('holds nothing it was not given, nor what it released', () => {
    const { clock, leases } = leasesOnAClock();
    expect(leases.stillHeld('a')).toBe(false);
    leases.hold('a', clock.ms);
    leases.release('a');
    expect(leases.has('a')).toBe(false);
    expect(leases.stillHeld('a')).toBe(false);
  });

  it('renews the leases in flight until now plus the lease, and moves them on from when it asked', async () => {
    const { clock, leases, calls } = leasesOnAClock();
    leases.hold('a', clock.ms);
    leases.hold('b', clock.ms);
    clock.ms += LEASE_MS; // lapsed, as far as this worker knows
    expect(leases.stillHeld('a')).toBe(false);
    await leases.renew();
    expect(calls).toEqual([{ ids: ['a', 'b'], until: new Date(1_000_000 + LEASE_MS) }]);
    expect(leases.stillHeld('a')).toBe(true);
    expect(leases.stillHeld('b')).toBe(true);
  });

  it('moves on only the leases the store renewed: one another worker took over keeps its end', async () => {
    const { clock, leases } = leasesOnAClock(async () => ['a']);
    leases.hold('a', clock.ms);
    leases.hold('b', clock.ms);
    clock.ms += LEASE_MS / 2;
    await leases.renew();
    clock.ms += LEASE_MS / 2;
    expect(leases.stillHeld('a')).toBe(true);
    expect(leases.stillHeld('b')).toBe(false);
  });

  it('does not hold again a delivery released while its renewal was under way', async () => {
    let answer: (ids: string[]) => void = () => {};
    const { clock, leases } = leasesOnAClock(() => new Promise((resolve) => (answer = resolve)));
    leases.hold('a', clock.ms);
    const renewing = leases.renew();
    leases.release('a');
    answer(['a']);
    await renewing;
    expect(leases.has('a')).toBe(false);
  });

  it('asks nothing while nothing is in flight', async () => {
    const { leases, calls } = leasesOnAClock();
    await leases.renew();
    expect(calls).toEqual([]);
  });

  it('runs one renewal at a time', async () => {
    let answer: (ids: string[]) => void = () => {};
    const { clock, leases, calls } = leasesOnAClock(() => new Promise((resolve) => (answer = resolve)));
    leases.hold('a', clock.ms);
    const first = leases.renew();
    const second = leases.renew();
    expect(calls).toHaveLength(1);
    answer(['a']);
    await Promise.all([first, second]);
    const third = leases.renew();
    expect(calls).toHaveLength(2);
    answer(['a']);
    await third;
  });

  it('says a failing renewal once until one succeeds, and again at the next outage', async () => {
    const store = { down: true };
    const { clock, leases, lines } = leasesOnAClock(async (ids) => {
      if (store.down) throw new Error('the database is down');
      return [...ids];
    });
    leases.hold('a', clock.ms);
    await leases.renew();
    await leases.renew();
    expect(lines.map((line) => line.msg)).toEqual(['could not renew the leases of deliveries in flight; will retry']);
    expect(lines.map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: 40, msg: 'could not renew the leases of deliveries in flight; will retry' }, // warn
    ]);
    store.down = false;
    await leases.renew();
    store.down = true;
    await leases.renew();
    expect(lines).toHaveLength(2);
  });

  it(`renews ${RENEWALS_PER_LEASE} times a lease once started, and no more once stopped`, async () => {
    vi.useFakeTimers();
    const { clock, leases, calls } = leasesOnAClock();
    leases.hold('a', clock.ms);
    leases.startRenewing();
    leases.startRenewing(); // started again: still one timer
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    expect(calls).toHaveLength(RENEWALS_PER_LEASE);
    leases.stopRenewing();
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    expect(calls).toHaveLength(RENEWALS_PER_LEASE);
  });
});

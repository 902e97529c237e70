// The inquiry limiter (both doors) in memory: per client key, IPv6 addresses by their /64, the
// RateLimit fields it answers with, a bounded number of addresses tracked, the use given back for an
// inquiry that was not stored, and admitInquiry, the one admission rule of both doors.
import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitInquiry, clientKey, createWindowLimiter, type WindowLimiter, windowText } from '../../src/inquiries/rate-limit.js';

/** The seconds to wait after one more use: 0 when allowed. */
const waitAfter = async (limiter: WindowLimiter, address: string) => (await limiter.take(address))?.retryAfterSeconds;

/** The eight groups of an IPv6 address as numbers, read by an independent route: Node's URL parser. */
function groupsOf(address: string): number[] {
  const host = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = host.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return all.map((group) => Number.parseInt(group, 16));
}

const toAddress = (groups: readonly number[]) => groups.map((group) => group.toString(16)).join(':');

describe('clientKey', () => {
  it('gives every address of one /64 the same key, a key whose /64 holds it, and another /64 another key', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }), (address, otherHalf) => {
        const key = clientKey(address);
        fc.pre(!key.includes('.')); // a mapped IPv4 address counts as itself (below)
        const groups = groupsOf(address);
        const sibling = toAddress([...groups.slice(0, 4), ...otherHalf]);
        expect(clientKey(sibling)).toBe(key);
        const subnet = new BlockList();
        subnet.addSubnet(key.replace(/\/64$/, ''), 64, 'ipv6');
        expect(subnet.check(address, 'ipv6')).toBe(true);
        const neighbour = [...groups];
        neighbour[3] = ((neighbour[3] ?? 0) + 1) % 0x10000;
        expect(clientKey(toAddress(neighbour))).not.toBe(key);
      }),
    );
  });

  it('keeps IPv4 addresses as they are, and reads one mapped into IPv6 as it, however it is written', () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
        const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        expect(clientKey(address)).toBe(address);
        for (const mapped of [`::ffff:${address}`, `0:0:0:0:0:ffff:${address}`, `::FFFF:${hex}`, `0:0:0:0:0:ffff:${hex}`]) {
          expect(clientKey(mapped)).toBe(address);
        }
      }),
    );
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });
});

describe('the window limiter in memory', () => {
  it('counts the addresses of one /64 against one window', async () => {
    const limiter = createWindowLimiter({ max: 2, windowMs: 60_000 }, null, () => 0);
    expect(await waitAfter(limiter, '2001:db8::1')).toBe(0);
    expect(await waitAfter(limiter, '2001:db8::2')).toBe(0);
    expect(await waitAfter(limiter, '2001:db8:0:0:ffff::3')).toBe(60);
    expect(await waitAfter(limiter, '2001:db8:0:1::1')).toBe(0); // the next /64
  });

  it('answers with the limit, what is left and when the window resets, and names its rule', async () => {
    let time = 0;
    const limiter = createWindowLimiter({ max: 2, windowMs: 600_000 }, null, () => time);
    expect(limiter.rule).toEqual({ max: 2, window: '10 minutes' });
    expect(await limiter.take('192.0.2.9')).toEqual({ limit: 2, remaining: 1, resetSeconds: 600, retryAfterSeconds: 0 });
    time = 15_500;
    expect(await limiter.take('192.0.2.9')).toEqual({ limit: 2, remaining: 0, resetSeconds: 585, retryAfterSeconds: 0 });
    expect(await limiter.take('192.0.2.9')).toEqual({ limit: 2, remaining: 0, resetSeconds: 585, retryAfterSeconds: 585 });
    time = 600_000;
    expect(await limiter.take('192.0.2.9')).toMatchObject({ remaining: 1, retryAfterSeconds: 0 });
    expect(createWindowLimiter(null).rule).toBeNull();
    expect(await createWindowLimiter(null).take('192.0.2.9')).toBeNull();
  });

  it.each([
    [1_000, 'second'],
    [45_000, '45 seconds'],
    [60_000, 'minute'],
    [600_000, '10 minutes'],
    [90_000, '90 seconds'],
    [3_600_000, 'hour'],
    [7_200_000, '2 hours'],
  ])('writes a window of %i ms as "%s"', (windowMs, text) => {
    expect(windowText(windowMs)).toBe(text);
  });

  it('forgets the oldest window once it tracks 10,000 addresses, so a call costs the same however many there are', async () => {
    let time = 0;
    const limiter = createWindowLimiter({ max: 1, windowMs: 3_600_000 }, null, () => time);
    expect(await waitAfter(limiter, '192.0.2.1')).toBe(0);
    expect(await waitAfter(limiter, '192.0.2.1')).toBeGreaterThan(0);
    for (let i = 0; i < 10_000; i++) {
      time += 1;
      await limiter.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    }
    // The first address's window was the oldest: forgotten, it starts anew.
    expect(await waitAfter(limiter, '192.0.2.1')).toBe(0);
    // The most recent ones are still counted.
    expect(await waitAfter(limiter, '10.0.39.15')).toBeGreaterThan(0);
  });
});

describe('giving a use back (refund) in memory', () => {
  it('frees the use an inquiry that was not stored took, so the allowance is whole again', async () => {
    const limiter = createWindowLimiter({ max: 2, windowMs: 60_000 }, null, () => 0);
    expect(await limiter.take('192.0.2.7')).toMatchObject({ remaining: 1, retryAfterSeconds: 0 });
    expect(await limiter.take('192.0.2.7')).toMatchObject({ remaining: 0, retryAfterSeconds: 0 });
    expect(await waitAfter(limiter, '192.0.2.7')).toBe(60);
    await limiter.refund('192.0.2.7');
    // One use is free again, not more: the 429 above counted nothing.
    expect(await limiter.take('192.0.2.7')).toMatchObject({ remaining: 0, retryAfterSeconds: 0 });
    expect(await waitAfter(limiter, '192.0.2.7')).toBe(60);
    // By the client's key: another address of the same /64 gives back the use of the first.
    await limiter.take('2001:db8::1');
    await limiter.take('2001:db8::1');
    await limiter.refund('2001:db8::2');
    expect(await waitAfter(limiter, '2001:db8::3')).toBe(0);
    expect(await waitAfter(limiter, '2001:db8::1')).toBe(60);
  });

  it('never counts below zero, and gives nothing to a window that has not taken anything', async () => {
    let time = 0;
    const limiter = createWindowLimiter({ max: 2, windowMs: 60_000 }, null, () => time);
    await limiter.refund('192.0.2.8'); // nothing taken yet
    await limiter.take('192.0.2.8');
    await limiter.refund('192.0.2.8');
    await limiter.refund('192.0.2.8'); // one more than was taken
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(0);
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(0);
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(60);
    // The window is over: a late refund does not carry into the next one.
    time = 60_000;
    await limiter.refund('192.0.2.8');
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(0);
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(0);
    expect(await waitAfter(limiter, '192.0.2.8')).toBe(60);
    // Without a limit there is nothing to give back.
    await expect(createWindowLimiter(null).refund('192.0.2.8')).resolves.toBeUndefined();
  });
});

describe('admitInquiry', () => {
  const failure = new Error('the inquiry could not be stored');

  it('gives the use back when sending fails, and passes the failure on', async () => {
    const limiter = createWindowLimiter({ max: 1, windowMs: 60_000 }, null, () => 0);
    const noRetry = async (): Promise<string | null> => null;
    await expect(
      admitInquiry(limiter, '192.0.2.20', noRetry, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    // The one use is free: the next inquiry is sent, and counted.
    const sent = await admitInquiry(limiter, '192.0.2.20', noRetry, async (retry) => retry ?? 'stored');
    expect(sent).toEqual({
      answer: 'stored',
      verdict: expect.objectContaining({ remaining: 0, retryAfterSeconds: 0 }),
    });
    // And the one after it is refused without being sent.
    let sentAgain = false;
    const refused = await admitInquiry(limiter, '192.0.2.20', noRetry, async () => {
      sentAgain = true;
      return 'stored';
    });
    expect(refused).toEqual({ refused: expect.objectContaining({ retryAfterSeconds: 60 }), rule: { max: 1, window: 'minute' } });
    expect(sentAgain).toBe(false);
  });

  it('answers a retry already answered without counting it, and gives back nothing when its answer fails', async () => {
    const limiter = createWindowLimiter({ max: 1, windowMs: 60_000 }, null, () => 0);
    expect(
      await admitInquiry(
        limiter,
        '192.0.2.21',
        async () => null,
        async () => 'first',
      ),
    ).toMatchObject({ answer: 'first' });
    // The allowance is used up; a retry is answered all the same, from its first answer.
    expect(
      await admitInquiry(
        limiter,
        '192.0.2.21',
        async () => 'replayed',
        async (retry) => `${retry} again`,
      ),
    ).toEqual({
      answer: 'replayed again',
      verdict: null,
    });
    // A retry whose answer fails took nothing, so gives nothing back: the next new inquiry is still refused.
    await expect(
      admitInquiry(
        limiter,
        '192.0.2.21',
        async () => 'replayed',
        async () => {
          throw failure;
        },
      ),
    ).rejects.toBe(failure);
    expect(
      await admitInquiry(
        limiter,
        '192.0.2.21',
        async () => null,
        async () => 'new',
      ),
    ).toMatchObject({
      refused: { retryAfterSeconds: 60 },
    });
  });
});

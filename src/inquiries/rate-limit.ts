// RATE_LIMIT_INQUIRIES: inquiries accepted per client address per fixed window, one allowance for both
// doors (POST /api/contact, MCP submit_inquiry; docs/api.md "Rate limits"): one not stored gives its
// use back. In memory per process, or in Redis (shared by every instance) with REDIS_URL.
import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.js';

/**
 * Addresses tracked in memory at most: past this the oldest window is forgotten (memory stays
 * bounded and each call costs the same however many addresses there are).
 */
const MAX_TRACKED_ADDRESSES = 10_000;
const REDIS_KEY_PREFIX = 'studio-inquiry:inquiries:';
/**
 * Atomically: INCR below the limit (ARGV[2]); past it count nothing (as in memory: a use given back is
 * then free again) and answer limit + 1. Expire a key that has no expiry (a first use, or a key left
 * without one, which would refuse for ever; a count refunded to zero keeps its window); answer PTTL.
 */
const REDIS_WINDOW_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count < tonumber(ARGV[2]) then count = redis.call('INCR', KEYS[1]) else count = count + 1 end
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;
/**
 * DECR the window's count, never below zero, and never a window that is gone: DECR on a missing key
 * would leave -1 there without an expiry (a use more, for ever). The key keeps its expiry.
 */
const REDIS_REFUND_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/** What one use of the allowance came to (the draft IETF RateLimit fields, and Retry-After). */
export interface LimitVerdict {
  readonly limit: number;
  /** Uses left in the window after this one. */
  readonly remaining: number;
  /** Seconds until the window resets. */
  readonly resetSeconds: number;
  /** 0 when allowed; otherwise the seconds to wait. */
  readonly retryAfterSeconds: number;
}

/** The rule, for messages: at most `max` per `window` (e.g. "10 minutes"). */
export interface LimitRule {
  readonly max: number;
  readonly window: string;
}

export interface WindowLimiter {
  /** The rule; null when off. */
  readonly rule: LimitRule | null;
  /**
   * Counts one use by `address` (a refused one is not counted); null when there is no limit, or
   * Redis could not say.
   */
  take(address: string): Promise<LimitVerdict | null>;
  /**
   * Gives back one use `take` counted for `address` (its inquiry was not stored) to the window running
   * now: never below zero, nothing once it is over (one restarted in between gets it: one use more,
   * once). Does nothing without a limit, or when Redis cannot be reached.
   */
  refund(address: string): Promise<void>;
}

/** How admitInquiry answered: refused past the limit (nothing sent, `rule` for the message), or what `send` answered. */
export type Admission<Answer> =
  | { readonly refused: LimitVerdict; readonly rule: LimitRule }
  | { readonly refused?: undefined; readonly answer: Answer; readonly verdict: LimitVerdict | null };

/**
 * Admits one inquiry at either door: a retry whose Idempotency-Key has answered is answered from a
 * read (InquiryService.answerRetry), uncounted; any other is counted, and refused unsent past the limit.
 * `send` answers with the retry's answer or stores the inquiry.
 */
export async function admitInquiry<Answer>(
  limiter: WindowLimiter,
  address: string,
  answerRetry: () => Promise<Answer | null>,
  send: (retry: Answer | null) => Promise<Answer>,
): Promise<Admission<Answer>> {
  const { rule } = limiter;
  // No limit: nothing read or counted; a retry goes into the write batch, which looks its key up anyway.
  if (rule === null) return { answer: await send(null), verdict: null };
  const retry = await answerRetry();
  if (retry !== null) return { answer: await send(retry), verdict: null };
  const verdict = await limiter.take(address);
  if (verdict !== null && verdict.retryAfterSeconds > 0) return { refused: verdict, rule };
  try {
    return { answer: await send(null), verdict };
  } catch (error) {
    // submit throws only when nothing was stored: the use is given back, since the limit counts
    // inquiries accepted and a client told "not stored, try again" must be able to.
    if (verdict !== null) await limiter.refund(address);
    throw error;
  }
}

export function createWindowLimiter(
  config: RateLimitConfig | null,
  redis: Redis | null = null,
  now: () => number = Date.now,
): WindowLimiter {
  if (config === null) return { rule: null, take: async () => null, refund: async () => {} };
  const rule = { max: config.max, window: windowText(config.windowMs) };
  if (redis) {
    return { rule, take: (address) => takeInRedis(config, redis, address), refund: (address) => refundInRedis(redis, address) };
  }
  // In the order their windows started (a new window is inserted anew), so the first is the oldest.
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    rule,
    async take(address) {
      const at = now();
      const key = clientKey(address);
      let window = windows.get(key);
      if (!window || window.resetAt <= at) {
        windows.delete(key);
        while (windows.size >= MAX_TRACKED_ADDRESSES) windows.delete(windows.keys().next().value as string);
        window = { count: 0, resetAt: at + config.windowMs };
        windows.set(key, window);
      }
      const allowed = window.count < config.max;
      if (allowed) window.count++;
      return verdict(config, window.count, window.resetAt - at, allowed);
    },
    async refund(address) {
      const window = windows.get(clientKey(address));
      if (window && window.resetAt > now() && window.count > 0) window.count--;
    },
  };
}

function verdict(config: RateLimitConfig, count: number, leftMs: number, allowed: boolean): LimitVerdict {
  const resetSeconds = Math.max(1, Math.ceil(leftMs / 1000));
  return {
    limit: config.max,
    remaining: Math.max(0, config.max - count),
    resetSeconds,
    retryAfterSeconds: allowed ? 0 : resetSeconds,
  };
}

/** "10 minutes", "hour", "30 seconds": the window as RATE_LIMIT_INQUIRIES gave it, for "at most 5 per …". */
export function windowText(windowMs: number): string {
  const [size, unit] =
    windowMs % 3_600_000 === 0
      ? [windowMs / 3_600_000, 'hour']
      : windowMs % 60_000 === 0
        ? [windowMs / 60_000, 'minute']
        : [windowMs / 1000, 'second'];
  return size === 1 ? unit : `${size} ${unit}s`; // "per minute", not "per 1 minute"
}

/**
 * What a client address counts under: IPv4 as it is, IPv4-mapped IPv6 (RFC 4291 §2.5.5.2, however
 * written) as its IPv4 address, and other IPv6 by its /64, since a host or site is given a whole /64
 * (RFC 6177) and can send from any address in it.
 */
export function clientKey(address: string): string {
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const [, , , , , mapped = 0, high = 0, low = 0] = groups;
  if (groups.slice(0, 5).every((group) => group === 0) && mapped === 0xffff) {
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (RFC 4291 §2.2: "::" and a dotted IPv4 ending spelled out). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const parts = (text: string) => (text === '' ? [] : text.split(':').flatMap(dottedAsGroups));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16));
}

/** A dotted IPv4 ending stands for the last two groups. */
function dottedAsGroups(part: string): string[] {
  if (!part.includes('.')) return [part];
  const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

async function takeInRedis(config: RateLimitConfig, redis: Redis, address: string): Promise<LimitVerdict | null> {
  try {
    const [count, ttlMs] = (await redis.eval(
      REDIS_WINDOW_SCRIPT,
      1,
      `${REDIS_KEY_PREFIX}${clientKey(address)}`,
      config.windowMs,
      config.max,
    )) as [number, number];
    return verdict(config, Math.min(count, config.max), ttlMs, count <= config.max);
  } catch {
    // Redis unreachable: let the inquiry through rather than lose it.
    return null;
  }
}

async function refundInRedis(redis: Redis, address: string): Promise<void> {
  try {
    await redis.eval(REDIS_REFUND_SCRIPT, 1, `${REDIS_KEY_PREFIX}${clientKey(address)}`);
  } catch {
    // Redis unreachable: the use stays counted until its window ends (its inquiry failed anyway).
  }
}

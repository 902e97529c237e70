// When to try a failed delivery again: capped exponential backoff with jitter, for a retry window
// of several days, at least 24 h (docs/delivery.md).

export interface RetryPolicy {
  /** Delay after the first failure. */
  readonly baseMs: number;
  /** No delay grows beyond this. */
  readonly capMs: number;
  /** After this long since the delivery was created, a failing delivery is given up ("dead"). */
  readonly windowMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  baseMs: 10 * 1000,
  capMs: 60 * 60 * 1000,
  windowMs: 72 * 60 * 60 * 1000,
});

/**
 * Delay before attempt `failures + 1`: base·2^(failures-1), capped, then "equal jitter" (half fixed,
 * half random) so that deliveries that failed together do not retry together.
 */
export function retryDelayMs(failures: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * The next run time after a failure, or null when the retry window (from `queuedAt`) is spent. A
 * receiver's Retry-After (`askedMs`) is kept to if it is longer than the backoff, up to the cap: a
 * receiver asking for days would otherwise stall the delivery past anyone's notice.
 */
export function nextAttemptAt(
  queuedAt: Date,
  now: Date,
  failures: number,
  policy: RetryPolicy,
  random?: () => number,
  askedMs = 0,
): Date | null {
  if (now.getTime() - queuedAt.getTime() >= policy.windowMs) return null;
  const delay = Math.max(retryDelayMs(failures, policy, random), Math.min(askedMs, policy.capMs));
  return new Date(now.getTime() + delay);
}

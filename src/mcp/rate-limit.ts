// A fixed-window counter per client address for submit_inquiry, with RATE_LIMIT_INQUIRIES' numbers.
// (The HTTP route uses @fastify/rate-limit, a route hook; a tool call is not a route.)
import type { RateLimitConfig } from '../config.js';

/** Forget addresses whose window has ended once this many are tracked, so memory stays bounded. */
const MAX_TRACKED_ADDRESSES = 10_000;

export interface WindowLimiter {
  /** Counts one use; returns 0 when allowed, or the seconds until the window resets. */
  take(address: string): number;
}

export function createWindowLimiter(config: RateLimitConfig | null, now: () => number = Date.now): WindowLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    take(address) {
      if (config === null) return 0;
      const at = now();
      if (windows.size >= MAX_TRACKED_ADDRESSES) {
        for (const [key, window] of windows) if (window.resetAt <= at) windows.delete(key);
      }
      let window = windows.get(address);
      if (!window || window.resetAt <= at) {
        window = { count: 0, resetAt: at + config.windowMs };
        windows.set(address, window);
      }
      if (window.count >= config.max) return Math.max(1, Math.ceil((window.resetAt - at) / 1000));
      window.count++;
      return 0;
    },
  };
}

// A fixed-window counter per client address for submit_inquiry, with RATE_LIMIT_INQUIRIES' numbers
// (the HTTP route uses @fastify/rate-limit, a route hook; a tool call is not a route). In memory per
// process, or in Redis (shared by every instance) when REDIS_URL is set.
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.js';

/** Forget addresses whose window has ended once this many are tracked, so memory stays bounded. */
const MAX_TRACKED_ADDRESSES = 10_000;
const REDIS_KEY_PREFIX = 'studio-inquiry:mcp-inquiries:';
/** INCR, start the window on the first use, and say how long it has left: atomically. */
const REDIS_WINDOW_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

export interface WindowLimiter {
  /** Counts one use; resolves to 0 when allowed, or the seconds until the window resets. */
  take(address: string): Promise<number>;
}

export function createWindowLimiter(
  config: RateLimitConfig | null,
  redis: Redis | null = null,
  now: () => number = Date.now,
): WindowLimiter {
  if (config === null) return { take: async () => 0 };
  if (redis) return redisLimiter(config, redis);
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    async take(address) {
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

function redisLimiter(config: RateLimitConfig, redis: Redis): WindowLimiter {
  return {
    async take(address) {
      try {
        const [count, ttlMs] = (await redis.eval(REDIS_WINDOW_SCRIPT, 1, `${REDIS_KEY_PREFIX}${address}`, config.windowMs)) as [
          number,
          number,
        ];
        return count > config.max ? Math.max(1, Math.ceil(ttlMs / 1000)) : 0;
      } catch {
        // Redis unreachable: let the inquiry through rather than lose it.
        return 0;
      }
    },
  };
}

// With REDIS_URL, two instances share one rate-limit window per client address (Redis on
// 127.0.0.1:6379), for the HTTP route and for the MCP tool alike; an inquiry that was not stored
// gives its use back in that window.
import { randomInt } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/services.js';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
let one: TestApp;
let two: TestApp;
beforeAll(async () => {
  const env = { REDIS_URL, RATE_LIMIT_INQUIRIES: '3/m' };
  one = await startTestApp({ env, startWorker: false });
  two = await startTestApp({ env, startWorker: false });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
});

// A documentation-range address of its own per run, so that earlier runs' windows do not count.
const address = `198.51.100.${randomInt(1, 255)}`;
const MESSAGE_SALT = randomInt(1e9);

describe('rate limits with Redis', () => {
  it('count the inquiries a client sends to either instance against one window', async () => {
    const send = (app: TestApp, i: number) =>
      app.app.inject({
        method: 'POST',
        url: '/api/contact',
        remoteAddress: address,
        payload: validInquiry({ message: `redis ${MESSAGE_SALT} ${i}` }),
      });
    expect((await send(one, 1)).statusCode).toBe(200);
    expect((await send(two, 2)).statusCode).toBe(200);
    expect((await send(one, 3)).statusCode).toBe(200);
    const limited = await send(two, 4);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address still has its own window.
    const other = await two.app.inject({
      method: 'POST',
      url: '/api/contact',
      remoteAddress: `203.0.113.${randomInt(1, 255)}`,
      payload: validInquiry({ message: `other ${MESSAGE_SALT}` }),
    });
    expect(other.statusCode).toBe(200);
  });
});

describe('the HTTP limiter with Redis unreachable', () => {
  it('lets inquiries through rather than lose them', async () => {
    const app = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:9', RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    try {
      for (let i = 1; i <= 2; i++) {
        const response = await app.app.inject({
          method: 'POST',
          url: '/api/contact',
          remoteAddress: address,
          payload: validInquiry({ message: `redis down ${MESSAGE_SALT} ${i}` }),
        });
        expect(response.statusCode).toBe(200);
      }
      expect(await app.services.store.inquiries.list({ limit: 10 })).toHaveLength(2);
    } finally {
      await app.close();
    }
  });
});

/**
 * A TCP proxy to the real Redis that can be made to hang: from `hang()` on, it keeps every
 * connection open and passes nothing either way, as a paused or wedged server would.
 */
async function hangingProxy() {
  let hanging = false;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(6379, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (data) => !hanging && upstream.write(data));
    upstream.on('data', (data) => !hanging && client.write(data));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    hang: () => {
      hanging = true;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    },
  };
}

describe('the limiters with a Redis that stops answering', () => {
  it('let inquiries through after a bounded wait, over HTTP and MCP, and report the outage once', async () => {
    const redis = await hangingProxy();
    const logLines: string[] = [];
    const app = await startTestApp({
      env: { REDIS_URL: redis.url, RATE_LIMIT_INQUIRIES: '100/m', LOG_LEVEL: 'warn' },
      startWorker: false,
      logLines,
    });
    const send = (i: number) =>
      app.app.inject({
        method: 'POST',
        url: '/api/contact',
        remoteAddress: address,
        payload: validInquiry({ message: `redis hanging ${MESSAGE_SALT} ${i}` }),
      });
    try {
      expect((await send(1)).statusCode).toBe(200); // Redis answers: the limit is counted there
      redis.hang();
      for (let i = 2; i <= 4; i++) {
        const started = Date.now();
        expect((await send(i)).statusCode).toBe(200);
        expect(Date.now() - started).toBeLessThan(10 * REDIS_COMMAND_TIMEOUT_MS);
      }
      const { createWindowLimiter } = await import('../../src/inquiries/rate-limit.js');
      // Redis could not say: no verdict, and the request goes through.
      expect(await createWindowLimiter({ max: 1, windowMs: 60_000 }, app.services.redis).take(address)).toBeNull();
      // The silent connection is dropped, which reports the outage, once.
      await vi.waitUntil(() => logLines.some((line) => line.includes('Redis is not answering')), { timeout: 5_000, interval: 50 });
      expect(logLines.filter((line) => line.includes('Redis is not answering'))).toHaveLength(1);
    } finally {
      await app.close();
      redis.close();
    }
  });
});

describe('the inquiry limiter with Redis', () => {
  it('shares one window between instances, and lets requests through when Redis is unreachable', async () => {
    const { Redis } = await import('ioredis');
    const { createWindowLimiter } = await import('../../src/inquiries/rate-limit.js');
    const a = new Redis(REDIS_URL);
    const b = new Redis(REDIS_URL);
    const down = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    try {
      const config = { max: 2, windowMs: 60_000 };
      const key = `203.0.113.${randomInt(1, 255)}-${MESSAGE_SALT}`;
      expect(await createWindowLimiter(config, a).take(key)).toMatchObject({ limit: 2, remaining: 1, retryAfterSeconds: 0 });
      // The window ends: its key expires with it, and the reset said is what is left of it.
      const ttlMs = await a.pttl(`studio-inquiry:inquiries:${key}`);
      expect(ttlMs).toBeGreaterThan(55_000);
      expect(ttlMs).toBeLessThanOrEqual(60_000);
      expect(await createWindowLimiter(config, b).take(key)).toMatchObject({ remaining: 0, retryAfterSeconds: 0 });
      const refused = await createWindowLimiter(config, a).take(key);
      expect(refused?.remaining).toBe(0);
      expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
      expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(refused?.resetSeconds).toBe(refused?.retryAfterSeconds);
      expect(Math.abs((refused?.resetSeconds ?? 0) - (await a.pttl(`studio-inquiry:inquiries:${key}`)) / 1000)).toBeLessThan(2);
      expect(await createWindowLimiter(config, down).take(key)).toBeNull();
    } finally {
      a.disconnect();
      b.disconnect();
      down.disconnect();
    }
  });
});

describe('giving a use back (refund) in Redis', () => {
  it('decrements the same key, keeps its window, never below zero, and a 429 leaves nothing to give back', async () => {
    const { Redis } = await import('ioredis');
    const { createWindowLimiter } = await import('../../src/inquiries/rate-limit.js');
    const a = new Redis(REDIS_URL);
    const b = new Redis(REDIS_URL);
    try {
      const config = { max: 2, windowMs: 60_000 };
      const key = `192.0.2.${randomInt(1, 255)}-refund-${MESSAGE_SALT}`;
      const redisKey = `studio-inquiry:inquiries:${key}`;
      // Nothing taken: a refund creates no key (a DECR would leave -1 there, without an expiry).
      await createWindowLimiter(config, a).refund(key);
      expect(await a.exists(redisKey)).toBe(0);
      expect(await createWindowLimiter(config, a).take(key)).toMatchObject({ remaining: 1, retryAfterSeconds: 0 });
      expect(await createWindowLimiter(config, b).take(key)).toMatchObject({ remaining: 0, retryAfterSeconds: 0 });
      // Refused while both are still being stored: not counted, so it cannot eat a use given back.
      expect((await createWindowLimiter(config, a).take(key))?.retryAfterSeconds).toBeGreaterThan(0);
      expect(await a.get(redisKey)).toBe('2');
      // One of the two is not stored: its instance gives the use back, and another instance sees it.
      await createWindowLimiter(config, b).refund(key);
      expect(await a.get(redisKey)).toBe('1');
      const ttlMs = await a.pttl(redisKey);
      expect(ttlMs).toBeGreaterThan(50_000); // the window goes on: the key keeps its expiry
      expect(ttlMs).toBeLessThanOrEqual(60_000);
      expect(await createWindowLimiter(config, a).take(key)).toMatchObject({ remaining: 0, retryAfterSeconds: 0 });
      expect((await createWindowLimiter(config, b).take(key))?.retryAfterSeconds).toBeGreaterThan(0);
      // Never below zero, however many refunds come.
      for (let i = 0; i < 4; i++) await createWindowLimiter(config, a).refund(key);
      expect(await a.get(redisKey)).toBe('0');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await createWindowLimiter(config, a).take(key)).toMatchObject({ remaining: 1, retryAfterSeconds: 0 });
      // Counted up from zero again, the window is still the one that began with the first use.
      expect(await a.pttl(redisKey)).toBeLessThan(ttlMs);
      // A key at the limit left without an expiry (by hand) gets one: it does not refuse for ever.
      await a.set(redisKey, '2');
      expect((await createWindowLimiter(config, a).take(key))?.retryAfterSeconds).toBe(60);
      expect(await a.pttl(redisKey)).toBeGreaterThan(50_000);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  it('does nothing, and throws nothing, when Redis is unreachable', async () => {
    const { Redis } = await import('ioredis');
    const { createWindowLimiter } = await import('../../src/inquiries/rate-limit.js');
    const down = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    try {
      await expect(createWindowLimiter({ max: 1, windowMs: 60_000 }, down).refund('192.0.2.1')).resolves.toBeUndefined();
    } finally {
      down.disconnect();
    }
  });

  it('frees the use of an inquiry one instance did not store, for both instances', async () => {
    const client = `198.18.0.${randomInt(1, 255)}`;
    const send = (app: TestApp, message: string) =>
      app.app.inject({
        method: 'POST',
        url: '/api/contact',
        remoteAddress: client,
        payload: validInquiry({ message: `refund ${MESSAGE_SALT} ${message}` }),
      });
    expect((await send(one, 'stored on one')).statusCode).toBe(200);
    // Another writer holds instance two's database: the inquiry sent there is not stored.
    const other = new SQLite(join(two.dir, 'studio.db'));
    other.exec('begin exclusive');
    try {
      const failed = await send(two, 'not stored on two');
      expect(failed.statusCode).toBe(500);
      expect(failed.json()).toMatchObject({ error: 'inquiry_not_stored' });
    } finally {
      other.exec('rollback');
      other.close();
    }
    // 3 per minute, one stored: two more are accepted, by either instance, and then no more.
    expect((await send(two, 'second')).statusCode).toBe(200);
    expect((await send(one, 'third')).statusCode).toBe(200);
    expect((await send(two, 'fourth')).statusCode).toBe(429);
  });
});

// With REDIS_URL, two instances share one rate-limit window per client address (Redis on
// 127.0.0.1:6379), for the HTTP route and for the MCP tool alike.
import { randomInt } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('the limiters with a Redis that accepts connections and never answers', () => {
  it('let inquiries through after a bounded wait, over HTTP and MCP, rather than hold them', async () => {
    const silent = createServer(() => {}); // takes every connection, reads, answers nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const { port } = silent.address() as AddressInfo;
    const app = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    try {
      const started = Date.now();
      const response = await app.app.inject({
        method: 'POST',
        url: '/api/contact',
        remoteAddress: address,
        payload: validInquiry({ message: `redis silent ${MESSAGE_SALT}` }),
      });
      expect(response.statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(10 * REDIS_COMMAND_TIMEOUT_MS);
      const { createWindowLimiter } = await import('../../src/mcp/rate-limit.js');
      expect(await createWindowLimiter({ max: 1, windowMs: 60_000 }, app.services.redis).take(address)).toBe(0);
    } finally {
      await app.close();
      silent.close();
    }
  });
});

describe('the MCP tool limiter with Redis', () => {
  it('shares one window between instances, and lets requests through when Redis is unreachable', async () => {
    const { Redis } = await import('ioredis');
    const { createWindowLimiter } = await import('../../src/mcp/rate-limit.js');
    const a = new Redis(REDIS_URL);
    const b = new Redis(REDIS_URL);
    const down = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    try {
      const config = { max: 2, windowMs: 60_000 };
      const key = `203.0.113.${randomInt(1, 255)}-${MESSAGE_SALT}`;
      expect(await createWindowLimiter(config, a).take(key)).toBe(0);
      expect(await createWindowLimiter(config, b).take(key)).toBe(0);
      const wait = await createWindowLimiter(config, a).take(key);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60);
      expect(await createWindowLimiter(config, down).take(key)).toBe(0);
    } finally {
      a.disconnect();
      b.disconnect();
      down.disconnect();
    }
  });
});

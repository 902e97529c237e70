// A PostgreSQL server silent without closing its connections (a partition, a failover): health must say
// so within seconds, not after TCP's timeouts, and recover by itself once the server answers again.
// The service talks to the real server through a TCP relay that the test can freeze.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type FreshDatabase, freshPostgres } from '../helpers/databases.js';

/** Forwards TCP to 127.0.0.1:5432; while frozen it reads and forwards nothing, and closes nothing. */
interface Relay {
  readonly port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

async function startRelay(): Promise<Relay> {
  const pairs: [Socket, Socket][] = [];
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: 5432 });
    pairs.push([client, upstream]);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    if (frozen) {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const [client, upstream] of pairs) {
        client.resume();
        upstream.resume();
      }
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let database: FreshDatabase;
let relay: Relay;
let testApp: TestApp;

beforeAll(async () => {
  database = await freshPostgres();
  relay = await startRelay();
  const viaRelay = database.url.replace('127.0.0.1:5432', `127.0.0.1:${relay.port}`);
  testApp = await startTestApp({ env: { DATABASE_URL: viaRelay }, startWorker: false });
});
afterAll(async () => {
  relay?.thaw();
  await testApp?.close();
  await relay?.close();
  await database?.drop();
});

const health = () => testApp.app.inject({ method: 'GET', url: '/api/health' });

describe('a PostgreSQL server that stops answering', () => {
  it('makes health answer 503 within seconds, and 200 again once it answers', { timeout: 30_000 }, async () => {
    expect((await health()).statusCode).toBe(200);

    relay.freeze();
    const started = performance.now();
    const down = await health();
    const seconds = (performance.now() - started) / 1000;
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 503, error: 'store_unavailable' });
    expect(seconds).toBeGreaterThan(1); // it waited for the probe's timeout, not for an error
    expect(seconds).toBeLessThan(5); // the probe gives up after 2 s

    relay.thaw();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await health()).statusCode;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});

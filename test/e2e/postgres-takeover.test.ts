// Two service processes on one PostgreSQL database: A claims deliveries it cannot finish (its SMTP server
// never greets) and is SIGKILLed holding them; B, beside it, delivers every one once the lease has run
// out: not before, and exactly once.
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_IN_TEXT, validInquiry } from '../helpers/app.js';
import { type FreshDatabase, freshPostgres } from '../helpers/databases.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const LEASE_SECONDS = 5;
/**
 * At most half the worker's 32 delivery slots: it claims again only while half of them are free, so
 * with more of its sends stuck some deliveries would not be claimed by A at all.
 */
const INQUIRIES = 16;

let database: FreshDatabase;
let smtp: TestSmtpServer;
let blackHole: { server: Server; port: number; connections: Set<Socket> };
const services: ServiceProcess[] = [];

/** A TCP server that accepts connections and never says a word: an SMTP send to it cannot finish. */
async function startBlackHole(): Promise<typeof blackHole> {
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.on('error', () => {}); // reset when the process at the other end is killed
    socket.on('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, connections };
}

beforeAll(async () => {
  database = await freshPostgres();
  smtp = await startSmtpServer();
  blackHole = await startBlackHole();
}, 30_000);
afterAll(async () => {
  for (const service of services) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  }
  for (const socket of blackHole?.connections ?? []) socket.destroy();
  blackHole?.server.close();
  await smtp?.stop();
  await database?.drop();
}, 30_000);

async function start(smtpUrl: string): Promise<ServiceProcess> {
  const service = await startService({
    DATABASE_URL: database.url,
    SMTP_URL: smtpUrl,
    INQUIRY_TO: 'studio@example.com',
    DELIVERY_LEASE_SECONDS: String(LEASE_SECONDS),
  });
  services.push(service);
  return service;
}

interface Lease {
  readonly reference: string;
  readonly status: string;
  readonly attempts: number;
  readonly lockedUntil: number | null;
}

async function leases(): Promise<Lease[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT reference, status, attempts, locked_until FROM deliveries ORDER BY reference');
    return rows.map((row) => ({
      reference: row.reference,
      status: row.status,
      attempts: Number(row.attempts),
      lockedUntil: row.locked_until === null ? null : Number(row.locked_until),
    }));
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an instance killed with SIGKILL while holding claims', () => {
  it('leaves them to the other instance, which delivers each exactly once after the lease', async () => {
    // A's sends wait for a greeting that never comes, far longer than this test runs.
    const a = await start(`smtp://127.0.0.1:${blackHole.port}?greetingTimeout=60000&connectionTimeout=60000`);
    const references: string[] = [];
    for (let i = 0; i < INQUIRIES; i++) {
      const response = await fetch(`${a.baseUrl}/api/contact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(validInquiry({ message: `held by an instance that dies, ${i}` })),
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      references.push(REFERENCE_IN_TEXT.exec(text)?.[0] ?? 'missing');
    }

    // A has claimed every delivery (leased, not attempted) and is trying to send them.
    const deadline = Date.now() + 10_000;
    let held = await leases();
    while (held.some((lease) => lease.lockedUntil === null) && Date.now() < deadline) {
      await sleep(20);
      held = await leases();
    }
    expect(held.map((lease) => lease.reference)).toEqual([...references].sort());
    for (const lease of held) {
      expect(lease).toMatchObject({ status: 'pending', attempts: 0, lockedUntil: expect.any(Number) });
      expect(lease.lockedUntil).toBeGreaterThan(Date.now());
    }
    expect(blackHole.connections.size).toBeGreaterThan(0);
    const firstExpiry = Math.min(...held.map((lease) => lease.lockedUntil ?? 0));

    // B starts beside A (its worker finds every delivery leased), then A dies without a word.
    const b = await start(smtp.url);
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');
    expect(smtp.received).toHaveLength(0);

    await smtp.waitFor(INQUIRIES, (LEASE_SECONDS + 15) * 1_000);
    await sleep(500); // time for a second copy to show up, if any
    const mailed = smtp.received.map((mail) => String(mail.parsed.headers.get('x-inquiry-reference')));
    expect(mailed.sort()).toEqual([...references].sort());
    // Taken over when the lease ran out, not while A held it.
    for (const mail of smtp.received) expect(mail.receivedAt).toBeGreaterThanOrEqual(firstExpiry);

    // B recorded one successful attempt of each; A, killed mid-send, recorded none.
    const recordedBy = Date.now() + 10_000;
    let final = await leases();
    while (final.some((lease) => lease.status !== 'succeeded') && Date.now() < recordedBy) {
      await sleep(50);
      final = await leases();
    }
    expect(final.map(({ status, attempts, lockedUntil }) => ({ status, attempts, lockedUntil }))).toEqual(
      Array(INQUIRIES).fill({ status: 'succeeded', attempts: 1, lockedUntil: null }),
    );
    expect(b.child.exitCode, b.output()).toBeNull();
  }, 45_000);
});

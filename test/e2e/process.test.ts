// The service as a real process: a SIGKILL in the middle of a stream of submissions loses no
// answered inquiry, SIGTERM shuts down cleanly, bad configuration stops start-up with one line.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REFERENCE_IN_TEXT, tempDir, validInquiry } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { freePort, spawnService, startService } from '../helpers/process.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { SEO_PITCH } from '../helpers/spam.js';

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** A service expected to stop during its start: what it writes to stderr (killed at the end if it does not stop). */
function failedStart(service: ReturnType<typeof spawnService>): () => string {
  let stderr = '';
  service.child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  cleanups.push(() => void service.child.kill('SIGKILL'));
  return () => stderr;
}

function workDir(): string {
  const dir = tempDir();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('crash safety', () => {
  it('delivers every inquiry that got a 200 after the process is killed with SIGKILL and restarted', async () => {
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    const env = { DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}`, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' };
    const first = await startService(env);
    cleanups.push(() => void first.child.kill('SIGKILL'));

    // Several concurrent streams of submissions; the process is killed while they run.
    const accepted: string[] = [];
    let killed = false;
    const stream = async (lane: number) => {
      for (let i = 0; !killed; i++) {
        try {
          const response = await fetch(`${first.baseUrl}/api/contact`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(validInquiry({ message: `lane ${lane} message ${i}` })),
          });
          if (response.status === 200) accepted.push(REFERENCE_IN_TEXT.exec(await response.text())?.[0] ?? 'missing');
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const lanes = Array.from({ length: 8 }, (_, lane) => stream(lane));
    while (accepted.length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
    first.child.kill('SIGKILL');
    killed = true;
    await Promise.all(lanes);
    expect(await first.exited).toBe('SIGKILL');
    expect(accepted).not.toContain('missing');

    const second = await startService(env);
    cleanups.push(async () => {
      second.child.kill('SIGTERM');
      await second.exited;
    });
    const expected = new Set(accepted);
    const deadline = Date.now() + 30_000;
    const delivered = () => new Set(smtp.received.map((mail) => String(mail.parsed.headers.get('x-inquiry-reference'))));
    while ([...expected].some((reference) => !delivered().has(reference))) {
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const missing = [...expected].filter((reference) => !delivered().has(reference));
    expect(missing).toEqual([]);
    expect(expected.size).toBeGreaterThanOrEqual(150);
  });
});

/** A connection to `baseUrl` that HTTP is written to as is, and what came back on it so far. */
async function rawClient(baseUrl: string) {
  const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  socket.on('error', () => {}); // reset when the server closes it
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { write: (text: string) => socket.write(text), received: () => received };
}

/**
 * The service on a SQLite file whose write lock another process holds (a `requeue`, the sqlite3
 * shell) until the test commits: an inquiry's commit waits for it, past the 2 s given on shutdown
 * to uploads that have not arrived.
 */
async function serviceWithItsDatabaseLocked() {
  const database = join(workDir(), 'studio.db');
  const service = await startService({ DATABASE_URL: `sqlite:${database}` });
  cleanups.push(() => void service.child.kill('SIGKILL'));
  const other = new SQLite(database);
  cleanups.push(() => void other.close());
  other.exec('begin immediate');
  return { service, other, lockedAt: Date.now() };
}

describe('process lifecycle', () => {
  it('on SIGTERM gives a delivery stuck in flight a bounded grace and exits 0 within 10 s', async () => {
    // A webhook receiver that never answers: its delivery is in flight when the signal comes.
    let arrived!: () => void;
    const delivering = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const hanging = createServer(() => arrived());
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => {
      hanging.closeAllConnections();
      hanging.close();
    });
    const { port } = hanging.address() as AddressInfo;
    const service = await startService({
      DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}`,
      WEBHOOK_URL: `http://127.0.0.1:${port}/hook`,
    });
    cleanups.push(() => void service.child.kill('SIGKILL'));
    const first = await fetch(`${service.baseUrl}/api/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(validInquiry({ message: 'delivery in flight' })),
    });
    expect(first.status).toBe(200);
    await delivering; // the delivery is now waiting on the receiver
    const started = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(service.output()).toContain('"msg":"stopped"');
    expect(service.output()).toContain('stopping with deliveries still in flight');
  });

  it('on SIGTERM closes a stalled upload after a bounded wait, stops the worker, closes the store and exits 0 within 10 s', async () => {
    const database = join(workDir(), 'studio.db');
    const service = await startService({ DATABASE_URL: `sqlite:${database}` });
    cleanups.push(() => void service.child.kill('SIGKILL'));
    // A client that sends its headers and part of the body it announced, then nothing more.
    const { port } = new URL(service.baseUrl);
    const stalled = connect(Number(port), '127.0.0.1');
    cleanups.push(() => void stalled.destroy());
    stalled.on('error', () => {}); // reset when the server closes it
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(
      'POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"firstName":"Ada",',
    );
    // The request is in flight once the service has logged it (it waits for the rest of its body).
    await vi.waitUntil(() => service.output().includes('"url":"/api/contact"'), { timeout: 10_000, interval: 20 });
    expect(service.output()).toContain('"url":"/api/contact"');
    const started = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited, service.output()).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(service.output()).toContain('uploads still running at shutdown');
    expect(service.output()).toContain('"msg":"stopped"');
    // The store was closed: SQLite checkpoints its write-ahead log into the file and removes it.
    expect(existsSync(`${database}-wal`)).toBe(false);
  });

  it('on SIGTERM answers a request that has arrived whole and waits on the database, then exits 0 within 10 s', async () => {
    const { service, other, lockedAt } = await serviceWithItsDatabaseLocked();
    const answer = fetch(`${service.baseUrl}/api/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(validInquiry({ message: 'sent just before the shutdown' })),
    });
    await vi.waitUntil(() => service.output().includes('"url":"/api/contact"'), { timeout: 10_000, interval: 20 });
    service.child.kill('SIGTERM');
    await vi.waitUntil(() => Date.now() - lockedAt >= 3_500, { timeout: 10_000, interval: 20 });
    other.exec('commit');
    const response = await answer;
    expect(response.status).toBe(200);
    const reference = REFERENCE_IN_TEXT.exec(await response.text())?.[0];
    expect(await service.exited, service.output()).toBe(0);
    expect(Date.now() - lockedAt).toBeLessThan(10_000);
    // Answered 200, and stored.
    const row = other.prepare('select reference from inquiries where reference = ?').get(reference);
    expect(row).toEqual({ reference });
    // Its connection, kept alive by the client, was ended with the answer: nothing was left for the
    // last cut to close.
    expect(service.output()).not.toContain('requests still running at shutdown');
  });

  it('on SIGTERM answers 503 to a request whose headers were still arriving, rather than close its connection unanswered', async () => {
    const service = await startService({ DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}` });
    cleanups.push(() => void service.child.kill('SIGKILL'));
    const client = await rawClient(service.baseUrl);
    client.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    service.child.kill('SIGTERM');
    await vi.waitUntil(() => service.output().includes('shutting down'), { timeout: 5_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    client.write('\r\n');
    await vi.waitUntil(() => client.received().includes('\r\n\r\n'), { timeout: 5_000, interval: 20 });
    expect(client.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(client.received()).toContain('shutting_down');
    expect(await service.exited, service.output()).toBe(0);
  });

  it('on SIGTERM answers a whole request even when a stalled upload is pipelined behind it on its connection', async () => {
    const { service, other, lockedAt } = await serviceWithItsDatabaseLocked();
    const client = await rawClient(service.baseUrl);
    const body = JSON.stringify(validInquiry({ message: 'answered before the stalled upload behind it' }));
    client.write(
      `POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        'POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"firstName":"Ada",',
    );
    await vi.waitUntil(() => service.output().includes('"url":"/api/contact"'), { timeout: 10_000, interval: 20 });
    service.child.kill('SIGTERM');
    await vi.waitUntil(() => Date.now() - lockedAt >= 3_500, { timeout: 10_000, interval: 20 });
    other.exec('commit');
    await vi.waitUntil(() => client.received().includes('\r\n\r\n'), { timeout: 10_000, interval: 20 });
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(client.received()).toMatch(REFERENCE_IN_TEXT);
    expect(await service.exited, service.output()).toBe(0);
    expect(Date.now() - lockedAt).toBeLessThan(10_000);
  });

  it('stops with exit code 1 and one line naming PORT when the port is in use', async () => {
    const port = await freePort();
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const database = join(workDir(), 'studio.db');
    const service = spawnService({ DATABASE_URL: `sqlite:${database}`, PORT: String(port) });
    const stderr = failedStart(service);
    expect(await service.exited, service.output()).toBe(1);
    expect(stderr()).toBe(`studio-inquiry: PORT: cannot listen on 127.0.0.1:${port}: the port is already in use\n`);
    expect(service.output()).not.toMatch(/^\s+at /m); // no uncaught error's stack
    expect(existsSync(`${database}-wal`)).toBe(false); // the store that was opened is closed
  });

  it('stops with exit code 1 and one line naming SIGNING_KEY_SECRET when it does not open the signing keys', async () => {
    const database = join(workDir(), 'studio.db');
    const first = await startService({ DATABASE_URL: `sqlite:${database}`, SIGNING_KEY_SECRET: 'the first secret, long enough' });
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const sealed = new SQLite(database, { readonly: true });
    const [row] = sealed.prepare('select private_jwk from signing_keys').all() as { private_jwk: string }[];
    sealed.close();
    expect(row?.private_jwk).toMatch(/^enc:v1:/);
    const service = spawnService({
      DATABASE_URL: `sqlite:${database}`,
      PORT: String(await freePort()),
      SIGNING_KEY_SECRET: 'a wrong secret, long enough',
    });
    const stderr = failedStart(service);
    expect(await service.exited, service.output()).toBe(1);
    expect(stderr()).toBe(
      'studio-inquiry: SIGNING_KEY_SECRET: does not open the token-signing keys in the database (the wrong secret? see docs/operations.md, "Signing keys at rest")\n',
    );
    expect(service.output()).not.toMatch(/^\s+at /m);
  });

  it('stops with exit code 1 and one line naming DATABASE_URL when it cannot write to the database it opened', async () => {
    const database = join(workDir(), 'studio.db');
    const first = await startService({ DATABASE_URL: `sqlite:${database}` }); // made and set up
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Another process holds the write lock longer than the service waits for it (a VACUUM by hand).
    const other = new SQLite(database);
    other.exec('begin immediate');
    cleanups.push(() => void other.close());
    const port = await freePort();
    const service = spawnService({ DATABASE_URL: `sqlite:${database}`, PORT: String(port) });
    const stderr = failedStart(service);
    expect(await service.exited, service.output()).toBe(1);
    expect(stderr()).toBe('studio-inquiry: DATABASE_URL: cannot write to the database (database is locked)\n');
    expect(service.output()).not.toMatch(/^\s+at /m); // no uncaught error's stack
  });

  it('warns at start-up when no delivery channel is configured', async () => {
    const service = await startService({ DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}` });
    service.child.kill('SIGTERM');
    await service.exited;
    const warning = service
      .output()
      .split('\n')
      .find((line) => line.includes('no delivery channel'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40 });
  });

  it('logs the retention in force at start-up', async () => {
    const service = await startService({ DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}`, RETENTION_INBOX: '24m' });
    service.child.kill('SIGTERM');
    await service.exited;
    const line = service
      .output()
      .split('\n')
      .find((text) => text.includes('"retention"'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 30,
      retention: { inbox: '24m', spam: '30d' },
      msg: 'retention: inbox inquiries deleted after 24 months, spam inquiries deleted after 30 days',
    });
  });

  // Every variable's rules are unit-tested in test/unit/config.test.ts; these check the process.
  it.each<[Record<string, string>, string]>([
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com' }, 'INQUIRY_TO'],
    [{ RETENTION_SPAM: '4 weeks' }, 'RETENTION_SPAM'],
    // A profile that is no JSON, at a path with a line break in it: still one line.
    [{ STUDIO_PROFILE: 'profile\nsecond line.json' }, 'STUDIO_PROFILE'],
  ])('stops with exit code 1 and one line naming the variable for %o', async (env, variable) => {
    const dir = workDir();
    if (env.STUDIO_PROFILE) writeFileSync(join(dir, env.STUDIO_PROFILE), '{ not json');
    const profile = env.STUDIO_PROFILE && { STUDIO_PROFILE: join(dir, env.STUDIO_PROFILE) };
    const service = spawnService({ DATABASE_URL: `sqlite:${join(dir, 'studio.db')}`, ...env, ...profile });
    expect(await service.exited).toBe(1);
    const lines = service.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
  });
});

describe('the spam rules thread', () => {
  it('judges on a thread the compiled service starts at the first inquiry: the pitch quarantined, the brief mailed', async () => {
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    const env = { DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}`, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' };
    const service = await startService({ ...env, SPAM_FILTER: 'on' });
    cleanups.push(() => void service.child.kill('SIGKILL'));
    const started = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('the spam rules thread'));
    expect(started()).toEqual([]);

    const post = async (body: unknown) => {
      const response = await fetch(`${service.baseUrl}/api/contact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return REFERENCE_IN_TEXT.exec(await response.text())?.[0];
    };
    const [spam, brief] = await Promise.all([post(SEO_PITCH), post(validInquiry({ message: 'We need a new website for our bakery.' }))]);
    const [mail] = await smtp.waitFor(1);
    expect(mail?.parsed.headers.get('x-inquiry-reference')).toBe(brief);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const verdicts = await Promise.all(
      [spam, brief].map(async (reference) => JSON.parse((await runCli(['show', reference as string, '--json'], env)).stdout).verdict),
    );
    expect(verdicts).toEqual(['spam', 'inbox']);
    expect(started().map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 30, msg: 'the spam rules thread started' }),
    ]);
  });
});

// The service as a real process: a SIGKILL in the middle of a stream of submissions loses no
// answered inquiry, SIGTERM shuts down cleanly, bad configuration stops start-up with one line.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REFERENCE_IN_TEXT, tempDir, validInquiry } from '../helpers/app.js';
import { spawnService, startService } from '../helpers/process.js';
import { startSmtpServer } from '../helpers/smtp.js';

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

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

describe('process lifecycle', () => {
  it('on SIGTERM gives a delivery stuck in flight a bounded grace and exits 0 within 10 s', async () => {
    // A webhook receiver that never answers: its delivery is in flight when the signal comes.
    const hanging = createServer(() => {});
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
    await new Promise((resolve) => setTimeout(resolve, 300)); // the delivery is now waiting on the receiver
    const started = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(service.output()).toContain('"msg":"stopped"');
    expect(service.output()).toContain('stopping with deliveries still in flight');
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

  // Every variable's rules are unit-tested in test/unit/config.test.ts; these check the process.
  it.each([
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com' }, 'INQUIRY_TO'],
  ])('stops with exit code 1 and one line naming the variable for %o', async (env, variable) => {
    const service = spawnService({ DATABASE_URL: `sqlite:${join(workDir(), 'studio.db')}`, ...env });
    expect(await service.exited).toBe(1);
    const lines = service.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
  });
});

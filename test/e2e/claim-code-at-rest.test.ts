// A claim code is never written to the database in clear: its mail waits in the outbox with a
// placeholder, the code is put in as it is sent (real SMTP server), and the person's code, read
// from the mail, completes the claim. The SQLite files never hold "code is <digits>".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codeFor, withCodes } from '../../src/auth/claim-code-mail.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('claim codes at rest', () => {
  it('are derived from a nonce, put into the mail only as it is sent', () => {
    const key = 'k'.repeat(43);
    const nonce = 'n'.repeat(24);
    expect(codeFor(key, nonce, 6)).toMatch(/^\d{6}$/);
    expect(codeFor(key, nonce, 6)).toBe(codeFor(key, nonce, 6));
    expect(codeFor('other key, same nonce', nonce, 6)).not.toBe(codeFor(key, nonce, 6));
    expect(withCodes(`Your code is {{claim-code:${nonce}}}.`, key, 6)).toBe(`Your code is ${codeFor(key, nonce, 6)}.`);
    expect(withCodes('A body that names {{claim-code:short}} keeps it.', key, 6)).toBe('A body that names {{claim-code:short}} keeps it.');
  });

  it('never reach the database in clear, and the mailed code completes the claim', async () => {
    const smtp: TestSmtpServer = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    // The worker is held back first: the code's mail waits in the outbox as it is stored.
    const testApp: TestApp = await startTestApp({
      env: { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' },
      listen: true,
      startWorker: false,
    });
    cleanups.push(() => testApp.close());
    const post = (path: string, body: unknown) =>
      fetch(`${testApp.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const registration = (await (await post('/agent/register', { type: 'anonymous', client_name: 'At rest' })).json()) as {
      claim_token: string;
      client_id: string;
    };
    expect((await post('/agent/claim', { claim_token: registration.claim_token, email: 'owner@example.com' })).status).toBe(202);
    const queued = await testApp.services.store.outbox.countByStatus();
    expect(queued.pending).toBe(1);
    const database = join(testApp.dir, 'studio.db');
    const stored = () => [database, `${database}-wal`].map((file) => readFileSync(file, { flag: 'r' }).toString('latin1')).join('');
    expect(stored()).toMatch(/verification code is \{\{claim-code:[A-Za-z0-9_-]{24}\}\}/);

    await testApp.services.worker.start();
    await smtp.waitFor(1);
    const code = /verification code is (\d{6})\./.exec(smtp.received[0]?.parsed.text ?? '')?.[1];
    expect(code).toMatch(/^\d{6}$/);
    const done = await post('/agent/claim', { claim_token: registration.claim_token, otp: code });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ client_id: registration.client_id, email: 'owner@example.com' });
    expect(stored()).not.toMatch(/code is \d{6}/);
  });
});

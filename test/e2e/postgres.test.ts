// The whole service on PostgreSQL (DATABASE_URL=postgres://…, a fresh database): intake with group
// commit, idempotency and folding, delivery to a real SMTP server, and the agent-auth flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { type FreshDatabase, freshPostgres } from '../helpers/databases.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let database: FreshDatabase;
let smtp: TestSmtpServer;
let testApp: TestApp;

beforeAll(async () => {
  database = await freshPostgres();
  smtp = await startSmtpServer();
  testApp = await startTestApp({ env: { DATABASE_URL: database.url, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' }, listen: true });
});
afterAll(async () => {
  await testApp?.close();
  await smtp?.stop();
  await database?.drop();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${testApp.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('on PostgreSQL', () => {
  it('accepts concurrent inquiries in group commits and delivers every one', async () => {
    expect(testApp.services.store.dialect).toBe('postgres');
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => post(validInquiry({ message: `postgres inquiry ${i}` }))));
    expect(responses.map((r) => r.status)).toEqual(Array(60).fill(200));
    const references = new Set(await Promise.all(responses.map(async (r) => referenceOf(await r.text()))));
    expect(references.size).toBe(60);
    await smtp.waitFor(60, 30_000);
    const delivered = new Set(smtp.received.map((mail) => String(mail.parsed.headers.get('x-inquiry-reference'))));
    for (const reference of references) expect(delivered.has(reference)).toBe(true);
    // …and every attempt is recorded (BIGINT columns take no fractions on PostgreSQL).
    const deadline = Date.now() + 15_000;
    let statuses = (await testApp.services.store.outbox.forReferences([...references])).map((d) => d.status);
    while (statuses.some((status) => status !== 'succeeded') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      statuses = (await testApp.services.store.outbox.forReferences([...references])).map((d) => d.status);
    }
    expect(statuses).toEqual(Array(60).fill('succeeded'));
  });

  it('refuses text with a NUL character with a 400 naming the field, and stores any other text as sent', async () => {
    for (const field of ['firstName', 'lastName', 'company', 'message']) {
      const response = await post(validInquiry({ [field]: 'one\u0000two' }));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: unknown }).errors).toEqual([
        { pointer: `/${field}`, detail: 'must not contain the NUL character (U+0000)' },
      ]);
    }
    const registration = await fetch(`${testApp.baseUrl}/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'anonymous', client_name: 'agent\u0000' }),
    });
    expect(registration.status).toBe(400);
    const message = 'Quotes " and \\ backslashes, {braces}, commas, NULL, emoji 🎨 and \u00a0 spaces.';
    const accepted = await post(validInquiry({ message }));
    expect(accepted.status).toBe(200);
    expect((await testApp.services.store.inquiries.findByReference(referenceOf(await accepted.text())))?.message).toBe(message);
  });

  it('keeps Idempotency-Key and duplicate folding', async () => {
    const body = validInquiry({ message: 'idempotent on postgres' });
    const [a, b] = await Promise.all([post(body, { 'idempotency-key': 'pg-key' }), post(body, { 'idempotency-key': 'pg-key' })]);
    expect(await a?.text()).toBe(await b?.text());
    expect((await post({ ...body, message: 'other' }, { 'idempotency-key': 'pg-key' })).status).toBe(422);
    const folded = await post(body);
    expect(referenceOf(await folded.text())).toBe(referenceOf(await (await post(body, { 'idempotency-key': 'pg-key' })).text()));
  });

  it('registers, issues a token that attributes, and revokes it', async () => {
    const registration = await testApp.services.auth.register({ type: 'anonymous', client_name: 'PG agent' });
    const { access_token } = await testApp.services.auth.token({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: String(registration.body.identity_assertion),
    });
    const attributed = await post(validInquiry({ message: 'attributed on postgres' }), { authorization: `Bearer ${access_token}` });
    const stored = await testApp.services.store.inquiries.findByReference(referenceOf(await attributed.text()));
    expect(stored?.clientId).toBe(registration.body.client_id);
    await testApp.services.auth.revoke(access_token);
    const after = await post(validInquiry({ message: 'after revoke on postgres' }), { authorization: `Bearer ${access_token}` });
    expect(after.headers.get('www-authenticate')).toContain('invalid_token');
  });
});

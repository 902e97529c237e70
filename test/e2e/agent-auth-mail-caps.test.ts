// The caps on the codes the service mails for agents, on each database, with the real SMTP server:
// Gmail's dot variants are one recipient, one domain and all codes together are capped (429 with
// Retry-After), and inquiries, over HTTP and MCP, are never held back by these caps.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { appDeps, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { loadStudioProfile } from '../../src/studio/profile.js';
import { validInquiry } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

// The caps this test holds the service to (src/auth/limits.ts), written out.
const PER_ADDRESS_PER_15_MIN = 3;
const PER_DOMAIN_PER_15_MIN = 10;
const MINUTE = 60_000;
const T0 = Date.parse('2026-05-04T08:00:00Z');

interface Instance {
  readonly app: Awaited<ReturnType<typeof buildApp>>;
  readonly services: Services;
  readonly smtp: TestSmtpServer;
  readonly setNow: (ms: number) => void;
}
type Response = Awaited<ReturnType<Instance['app']['inject']>>;

let database: FreshDatabase | undefined;
let running: Instance | undefined;
afterEach(async () => {
  await running?.app.close();
  await running?.services.close();
  await running?.smtp.stop();
  await database?.drop();
  running = undefined;
  database = undefined;
});

/** The service on a fresh database, mailing through a real SMTP server, its clock set by the test. */
async function start(fresh: () => Promise<FreshDatabase>, env: Record<string, string> = {}): Promise<Instance> {
  database = await fresh();
  const smtp = await startSmtpServer();
  const config = loadConfig({
    DATABASE_URL: database.url,
    RATE_LIMIT_INQUIRIES: 'off',
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://studio.example',
    SMTP_URL: smtp.url,
    INQUIRY_TO: 'studio@example.com',
    ...env,
  });
  let at = T0;
  const profile = loadStudioProfile(config.studioProfilePath);
  const logger = pino({ level: 'silent' });
  const services = await createServices(config, profile, logger, { now: () => new Date(at) });
  const app = await buildApp(appDeps({ config, logger, profile }, services));
  await app.ready();
  await services.worker.start();
  const setNow = (ms: number) => {
    at = ms;
  };
  running = { app, services, smtp, setNow };
  return running;
}

/** Every request from another client address, past the per-IP limits, as an attacker's would be. */
let addresses = 0;
const post = (instance: Instance, url: string, payload: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  instance.app.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress: `198.51.100.${++addresses % 250}` });

const registerWithEmail = (instance: Instance, email: string) =>
  post(instance, '/agent/register', { type: 'identity_assertion', assertion_type: 'verified_email', email, client_name: 'Mailer' });

async function startClaim(instance: Instance, email: string): Promise<Response> {
  const registered = await post(instance, '/agent/register', { type: 'anonymous', client_name: 'Claimable' });
  expect(registered.statusCode).toBe(201);
  return post(instance, '/agent/claim', { claim_token: (registered.json() as { claim_token: string }).claim_token, email });
}

function expectRefused(response: Response, detail: RegExp, retryAfterSeconds: number): void {
  expect(response.statusCode).toBe(429);
  expect(response.headers['retry-after']).toBe(String(retryAfterSeconds));
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status: 429, error: 'rate_limited', detail: expect.stringMatching(detail) });
}

/** An inquiry by POST /api/contact and one by the MCP tool submit_inquiry: both accepted, both mailed to the studio. */
async function expectInquiriesGoThrough(instance: Instance, email: string): Promise<void> {
  const mailed = instance.smtp.received.length;
  const contact = await post(instance, '/api/contact', validInquiry({ email, message: 'A website, please.' }));
  expect(contact.statusCode).toBe(200);
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_inquiry', arguments: validInquiry({ email }) } };
  const mcp = await post(instance, '/mcp', call, { accept: 'application/json, text/event-stream' });
  expect(mcp.statusCode).toBe(200);
  const { result } = mcp.json() as { result: { isError?: boolean; structuredContent: { reference: string } } };
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent.reference).toMatch(/^INQ-/);
  const mails = await instance.smtp.waitFor(mailed + 2);
  expect(mails.slice(mailed).map((mail) => mail.envelope.to)).toEqual([['studio@example.com'], ['studio@example.com']]);
}

const codesTo = (instance: Instance, domain: string) =>
  instance.smtp.received.filter(
    (mail) => mail.envelope.to.some((to) => to.toLowerCase().endsWith(`@${domain}`)) && /verification code/.test(mail.parsed.subject ?? ''),
  );

describe.each(BACKENDS)('caps on the mail sent for agents, on $name', ({ fresh }) => {
  it("Gmail's dot variants and googlemail.com are one mailbox: they share the limit per address", async () => {
    const instance = await start(fresh);
    for (const email of ['J.Doe@gmail.com', 'jdoe+x@GoogleMail.com', 'j.d.o.e@googlemail.com']) {
      expect((await registerWithEmail(instance, email)).statusCode).toBe(202);
    }
    expectRefused(await registerWithEmail(instance, 'jdoe@gmail.com'), /to this email address: try again in 15 minutes$/, 15 * 60);
    expectRefused(await startClaim(instance, 'JD.oe@googlemail.com'), /to this email address/, 15 * 60);
    // Elsewhere a dot is a different mailbox.
    expect((await registerWithEmail(instance, 'j.doe@example.com')).statusCode).toBe(202);
    expect((await registerWithEmail(instance, 'jdoe@example.com')).statusCode).toBe(202);

    await instance.smtp.waitFor(PER_ADDRESS_PER_15_MIN + 2);
    expect(codesTo(instance, 'gmail.com').length + codesTo(instance, 'googlemail.com').length).toBe(PER_ADDRESS_PER_15_MIN);
  });

  it('one domain gets at most 10 codes in 15 minutes, whichever of its addresses: then 429 with Retry-After, and inquiries still go through', async () => {
    const instance = await start(fresh);
    for (let i = 1; i <= PER_DOMAIN_PER_15_MIN; i++) {
      instance.setNow(T0 + i * 1000);
      const response =
        i % 2 === 0 ? await registerWithEmail(instance, `person${i}@example.org`) : await startClaim(instance, `person${i}@example.org`);
      expect(response.statusCode).toBe(202);
    }
    instance.setNow(T0 + 5 * MINUTE + 1000);
    expectRefused(
      await registerWithEmail(instance, 'newcomer@example.org'),
      /to addresses at example\.org: try again in 10 minutes$/,
      10 * 60,
    );
    expectRefused(await startClaim(instance, 'another@EXAMPLE.org'), /to addresses at example\.org/, 10 * 60);
    // Other domains are not held back, nor inquiries from the capped one.
    expect((await registerWithEmail(instance, 'person@example.net')).statusCode).toBe(202);
    await instance.smtp.waitFor(PER_DOMAIN_PER_15_MIN + 1);
    await expectInquiriesGoThrough(instance, 'someone@example.org');
    expect(codesTo(instance, 'example.org')).toHaveLength(PER_DOMAIN_PER_15_MIN);

    // Once the first code is 15 minutes old, one more fits.
    instance.setNow(T0 + 15 * MINUTE + 1000);
    expect((await registerWithEmail(instance, 'newcomer@example.org')).statusCode).toBe(202);
    expectRefused(await registerWithEmail(instance, 'late@example.org'), /to addresses at example\.org: try again in 1 second$/, 1);
  });

  it('SERVICE_MAIL_LIMIT caps all the codes of an hour, to anyone: then 429 with Retry-After, and inquiries still go through', async () => {
    const instance = await start(fresh, { SERVICE_MAIL_LIMIT: '3' });
    for (let i = 1; i <= 3; i++) {
      instance.setNow(T0 + i * MINUTE);
      expect((await registerWithEmail(instance, `owner@domain${i}.example`)).statusCode).toBe(202);
    }
    instance.setNow(T0 + 20 * MINUTE);
    const detail = /by this service in the last hour \(at most 3\): try again in 41 minutes$/;
    expectRefused(await registerWithEmail(instance, 'owner@domain4.example'), detail, 41 * 60);
    expectRefused(await startClaim(instance, 'owner@domain5.example'), detail, 41 * 60);
    await instance.smtp.waitFor(3);
    await expectInquiriesGoThrough(instance, 'owner@domain4.example');
    expect(instance.smtp.received.filter((mail) => /verification code/.test(mail.parsed.subject ?? ''))).toHaveLength(3);

    instance.setNow(T0 + 61 * MINUTE);
    expect((await registerWithEmail(instance, 'owner@domain4.example')).statusCode).toBe(202);
    expectRefused(await registerWithEmail(instance, 'owner@domain5.example'), /at most 3\): try again in 1 minute$/, 60);
  });
});

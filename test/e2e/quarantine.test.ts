// The spam filter wired into intake, over real sockets, on each backend: a spam inquiry is answered
// exactly as an inbox one and delivered nowhere (real SMTP server, real webhook receiver) until
// `release` delivers it once; with SPAM_FILTER=off it is delivered as any other.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { NEUTRAL_SIGNALS } from '../../src/spam/types.js';
import { judge } from '../../src/spam/verdict.js';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { runCli as cli } from '../helpers/cli.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { SEO_PITCH } from '../helpers/spam.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

const INQUIRY_TO = 'studio@northlight.example';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly reference: string;
}

async function post(testApp: TestApp, body: unknown): Promise<Answer> {
  const response = await fetch(`${testApp.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), body: text, reference: referenceOf(text) };
}

/** Polls `found` until it gives something truthy (15 s at most). */
async function until<T>(found: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = found();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('waited 15 s in vain');
    await sleep(25);
  }
}

/** An answer with what differs between any two inquiries (reference, date, request id) taken out. */
function shapeOf({ status, headers, body, reference }: Answer) {
  const { date: _date, 'x-request-id': _id, ...rest } = headers;
  return { status, headers: rest, body: body.replaceAll(reference, 'INQ-XXXXXX') };
}

describe.each(BACKENDS)('the quarantine on $name', ({ fresh }) => {
  async function setUp(spamFilter: 'on' | 'off') {
    const database: FreshDatabase = await fresh();
    cleanups.push(() => database.drop());
    const smtp: TestSmtpServer = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    const receiver: TestWebhookReceiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { port, base } = await reserveBaseUrl();
    const env = {
      PUBLIC_URL: base,
      DATABASE_URL: database.url,
      SMTP_URL: smtp.url,
      INQUIRY_TO,
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      SPAM_FILTER: spamFilter,
    };
    const testApp = await startTestApp({ env, listen: true, port });
    cleanups.push(() => testApp.close());
    const mailedTo = (reference: string) => smtp.received.filter((mail) => mail.parsed.subject?.endsWith(reference)).length;
    const hooked = (reference: string) => receiver.received.filter((hook) => hook.body.includes(reference)).length;
    return { testApp, smtp, receiver, env, mailedTo, hooked };
  }

  it('answers a spam inquiry exactly as an inbox one, delivers it nowhere, and delivers it once on release', async () => {
    expect(judge(SEO_PITCH, NEUTRAL_SIGNALS).verdict).toBe('spam');
    const { testApp, smtp, receiver, env, mailedTo, hooked } = await setUp('on');

    const inbox = await post(testApp, validInquiry());
    const spam = await post(testApp, SEO_PITCH);
    expect(shapeOf(spam)).toEqual(shapeOf(inbox));
    expect(spam.status).toBe(200);
    expect(spam.headers['inquiry-outcome']).toBe('created');

    // A repeat of it folds into it, answered as a duplicate, and stays in the quarantine.
    const repeat = await post(testApp, SEO_PITCH);
    expect(repeat.reference).toBe(spam.reference);
    expect(repeat.headers['inquiry-outcome']).toBe('duplicate');

    // The inbox one is delivered as before; then, with time for anything else to go out, nothing more.
    await smtp.waitFor(1);
    await receiver.waitFor((received) => received.length >= 1);
    await sleep(500);
    expect([mailedTo(inbox.reference), hooked(inbox.reference)]).toEqual([1, 1]);
    expect([mailedTo(spam.reference), hooked(spam.reference)]).toEqual([0, 0]);
    expect(await testApp.services.store.outbox.forReference(spam.reference)).toEqual([]);
    const judgement = (await testApp.services.store.inquiries.judgements([spam.reference])).get(spam.reference);
    expect(judgement).toMatchObject({
      verdict: 'spam',
      reasons: expect.arrayContaining([expect.objectContaining({ code: 'too_many_links' })]),
    });

    const released = await cli(['release', spam.reference.toLowerCase()], env);
    expect(released).toMatchObject({ code: 0, stderr: '' });
    expect(released.stdout).toMatch(
      new RegExp(
        `^Released ${spam.reference} \\(received [\\d\\-T:.]+Z\\) to the inbox at .*: its deliveries \\(email, webhook\\) are queued`,
      ),
    );
    await smtp.waitFor(2);
    await receiver.waitFor((received) => received.length >= 2);
    // Released again: nothing changes, nothing is sent twice.
    expect((await cli(['release', spam.reference], env)).stdout).toBe(`${spam.reference} is in the inbox already: nothing changed.\n`);
    await sleep(500);
    expect([mailedTo(spam.reference), hooked(spam.reference)]).toEqual([1, 1]);
    // The release is recorded, and shown.
    const shown = await cli(['show', spam.reference], env);
    expect(shown.stdout).toMatch(/^Verdict {3}inbox \(score [\d.]+\), released from the quarantine at \d{4}-\d\d-\d\dT[\d:.]+Z$/m);
    expect(JSON.parse((await cli(['show', spam.reference, '--json'], env)).stdout).releasedAt).toMatch(/^\d{4}-/);
    // Its original time is kept.
    const [hook] = receiver.received.filter((received) => received.body.includes(spam.reference));
    const stored = await testApp.services.store.inquiries.findByReference(spam.reference);
    expect(JSON.parse(hook?.body ?? '{}').data.receivedAt).toBe(stored?.receivedAt.toISOString());
  });

  it('answers a spam inquiry over MCP exactly as an inbox one, delivers only the inbox one, and counts both by verdict', async () => {
    const { testApp, smtp, mailedTo, hooked } = await setUp('on');
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${testApp.baseUrl}/mcp`)));
    const submit = async (inquiry: Record<string, unknown>) => {
      const result = await client.callTool({ name: 'submit_inquiry', arguments: inquiry });
      const reference = String((result.structuredContent as { reference?: unknown } | undefined)?.reference);
      return { reference, shape: JSON.parse(JSON.stringify(result).replaceAll(reference, 'INQ-XXXXXX')) };
    };
    const inbox = await submit(validInquiry());
    const spam = await submit(SEO_PITCH);
    await client.close();
    expect(spam.shape).toEqual(inbox.shape);
    expect(inbox.shape.isError).toBeFalsy();
    await smtp.waitFor(1);
    await sleep(500);
    expect([mailedTo(inbox.reference), mailedTo(spam.reference), hooked(spam.reference)]).toEqual([1, 0, 0]);
    const metrics = await testApp.services.metrics.registry.metrics();
    expect(metrics).toContain('studio_inquiry_inquiries_by_verdict_total{verdict="inbox"} 1');
    expect(metrics).toContain('studio_inquiry_inquiries_by_verdict_total{verdict="spam"} 1');
    expect(metrics).toContain('studio_inquiry_quarantines_by_reason_total{reason="too_many_links"} 1');
  });

  it("trusts the content of a claimed agent's inquiries, over HTTP and MCP, and not an anonymous agent's", async () => {
    const { testApp, smtp, mailedTo, hooked } = await setUp('on');
    const base = testApp.baseUrl;
    const postJson = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    /** A token for the contact endpoint, or for /mcp (RFC 8707: each is its own audience). */
    const tokenFor = async (assertion: string, resource = `${base}/`): Promise<string> => {
      const response = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion, resource }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { access_token: string }).access_token;
    };
    const registered = async (name: string) =>
      (await (await postJson('/agent/register', { type: 'anonymous', client_name: name })).json()) as {
        client_id: string;
        identity_assertion: string;
        claim_token: string;
      };
    // A body of its own each: the same one from other addresses would count (repeated_message), claimed or not.
    const pitchFrom = (email: string) => ({ ...SEO_PITCH, email, message: `${SEO_PITCH.message} Write to ${email}.` });
    const pitchWith = async (token: string, email: string) => {
      const response = await fetch(`${base}/api/contact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(pitchFrom(email)),
      });
      expect(response.status).toBe(200);
      return referenceOf(await response.text());
    };

    // An anonymous agent's token attributes its inquiry, and changes nothing about the verdict.
    const anonymous = await registered('Anonymous agent');
    const fromAnonymous = await pitchWith(await tokenFor(anonymous.identity_assertion), 'one@rankfast.example');

    // The same agent kind, claimed by a person through the code mailed to them, is trusted.
    const claimed = await registered('Claimed agent');
    expect((await postJson('/agent/claim', { claim_token: claimed.claim_token, email: 'owner@agency.example' })).status).toBe(202);
    const codeMail = await until(() => smtp.received.find((mail) => mail.envelope.to.includes('owner@agency.example')));
    const otp = /\b(\d{6})\b/.exec(codeMail.parsed.text ?? '')?.[1];
    expect((await postJson('/agent/claim', { claim_token: claimed.claim_token, otp })).status).toBe(200);
    const token = await tokenFor(claimed.identity_assertion);
    const fromClaimed = await pitchWith(token, 'two@rankfast.example');
    const client = new Client({ name: 'claimed-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await tokenFor(claimed.identity_assertion, `${base}/mcp`)}` } },
      }),
    );
    const overMcp = await client.callTool({ name: 'submit_inquiry', arguments: pitchFrom('three@rankfast.example') });
    await client.close();
    const fromClaimedOverMcp = String((overMcp.structuredContent as { reference?: unknown }).reference);

    const judgements = await testApp.services.store.inquiries.judgements([fromAnonymous, fromClaimed, fromClaimedOverMcp]);
    expect(judgements.get(fromAnonymous)?.verdict).toBe('spam');
    for (const reference of [fromClaimed, fromClaimedOverMcp]) {
      expect(judgements.get(reference)).toMatchObject({
        verdict: 'inbox',
        reasons: expect.arrayContaining([expect.objectContaining({ code: 'trusted_agent' })]),
      });
      expect((await testApp.services.store.inquiries.findByReference(reference))?.clientId).toBe(claimed.client_id);
    }
    expect((await testApp.services.store.inquiries.findByReference(fromAnonymous))?.clientId).toBe(anonymous.client_id);
    await until(() => mailedTo(fromClaimedOverMcp) > 0 && hooked(fromClaimedOverMcp) > 0);
    await sleep(500);
    expect([fromAnonymous, fromClaimed, fromClaimedOverMcp].map((reference) => [mailedTo(reference), hooked(reference)])).toEqual([
      [0, 0],
      [1, 1],
      [1, 1],
    ]);
  });

  it('delivers the same inquiry as any other with SPAM_FILTER=off', async () => {
    const { testApp, smtp, receiver, mailedTo, hooked } = await setUp('off');
    const spam = await post(testApp, SEO_PITCH);
    await smtp.waitFor(1);
    await receiver.waitFor((received) => received.length >= 1);
    expect([mailedTo(spam.reference), hooked(spam.reference)]).toEqual([1, 1]);
    expect((await testApp.services.store.inquiries.judgements([spam.reference])).get(spam.reference)).toEqual({
      verdict: 'inbox',
      score: 0,
      reasons: [],
    });
  });

  it('lists the quarantine with its reasons, shows and exports the verdict, and moves an inbox inquiry to spam', async () => {
    const { testApp, env } = await setUp('on');
    const inbox = await post(testApp, validInquiry());
    const spam = await post(testApp, SEO_PITCH);

    const [quarantine, inboxList, shown, shownJson, csv, json] = await Promise.all([
      cli(['list', '--spam'], env),
      cli(['list'], env),
      cli(['show', spam.reference], env),
      cli(['show', spam.reference, '--json'], env),
      cli(['export', '--format', 'csv', '--with-verdict'], env),
      cli(['export', '--format', 'json'], env),
    ]);
    expect(quarantine.code).toBe(0);
    const [header, row, ...rest] = quarantine.stdout.split('\n');
    expect(header).toMatch(/^REFERENCE +RECEIVED +NAME +EMAIL +SCORE +REASONS/);
    expect(row).toMatch(new RegExp(`^${spam.reference} .* Mark Stone +mark@rankfast\\.example +[\\d.]+ +.*too_many_links`));
    expect(rest.join('\n')).toContain('studio-inquiry release <reference>');
    expect(inboxList.stdout).toContain(inbox.reference);
    expect(inboxList.stdout).not.toContain(spam.reference);

    expect(shown.stdout).toMatch(/Verdict {3}spam \(score [\d.]+\)\n {2}too_many_links: /);
    expect(JSON.parse(shownJson.stdout)).toMatchObject({
      reference: spam.reference,
      verdict: 'spam',
      reasons: expect.arrayContaining([expect.objectContaining({ code: 'too_many_links' })]),
      deliveries: [],
    });
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toBe('reference,receivedAt,firstName,lastName,email,company,message,clientId,deliveries,verdict,reasons');
    expect(lines.find((line) => line.startsWith(spam.reference))).toMatch(/,spam,"\[\{""code"":""too_many_links""/);
    expect(lines.find((line) => line.startsWith(inbox.reference))).toMatch(/,inbox,\[\]$/);
    const exported = JSON.parse(json.stdout) as { reference: string; verdict: string }[];
    expect(exported.map(({ reference, verdict }) => [reference, verdict]).sort()).toEqual(
      [
        [inbox.reference, 'inbox'],
        [spam.reference, 'spam'],
      ].sort(),
    );

    const moved = await cli(['spam', inbox.reference], env);
    expect(moved.stdout).toMatch(new RegExp(`^Moved ${inbox.reference} .* to the quarantine`));
    expect((await cli(['list', '--spam'], env)).stdout).toContain(inbox.reference);
    expect((await cli(['spam', inbox.reference], env)).stdout).toBe(`${inbox.reference} is in the quarantine already: nothing changed.\n`);
    expect(await cli(['spam', 'INQ-000000'], env)).toMatchObject({ code: 1, stderr: 'studio-inquiry: no inquiry INQ-000000\n' });
    expect(await cli(['release'], env)).toMatchObject({ code: 2 });
    expect(await cli(['export', '--format', 'json', '--with-verdict'], env)).toMatchObject({ code: 2 });
  });
});

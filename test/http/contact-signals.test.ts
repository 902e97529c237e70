// The contact page's signals over HTTP in process (app.inject), with the spam filter on: the
// challenge endpoint, a proof in the Altcha header (valid once; replayed, malformed or absent), the
// Honeypot header, and the answer to each the same as to any other inquiry; MCP reads neither.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { CHALLENGE_RATE_LIMIT, challengeSchema } from '../../src/http/routes/contact-challenge.js';
import type { InquiryJudgement } from '../../src/storage/ports.js';
import { ajv } from '../../src/validation/ajv.js';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { encodeProof, solveProof } from '../helpers/proof.js';
import { TEST_WEBHOOK_SECRET } from '../helpers/webhook.js';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

// A webhook on a closed port: an inbox inquiry's delivery stays pending, to be counted.
const FILTERED = { SPAM_FILTER: 'on', WEBHOOK_URL: 'http://127.0.0.1:9/never', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };
const start = () => startTestApp({ env: FILTERED, startWorker: false });

const getChallenge = () => testApp.app.inject({ method: 'GET', url: '/api/contact/challenge' });
const freshProof = async () => (await solveProof((await getChallenge()).json())).header;
let sent = 0;
/** A new inquiry each time (a repeat would fold into the first and keep its verdict). */
const post = (headers: Record<string, string> = {}, body: unknown = validInquiry({ message: `A new website, please (${++sent}).` })) =>
  testApp.app.inject({
    method: 'POST',
    url: '/api/contact',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
const judgementOf = async (reference: string): Promise<InquiryJudgement | undefined> =>
  (await testApp.services.store.inquiries.judgements([reference])).get(reference);
const codesOf = async (body: string) => (await judgementOf(referenceOf(body)))?.reasons.map((reason) => reason.code);

describe('GET /api/contact/challenge', () => {
  it('answers a new signed challenge each time, never cached, with no cookie and the usual security headers', async () => {
    testApp = await start();
    const [first, second] = [await getChallenge(), await getChallenge()];
    for (const response of [first, second]) {
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      const validate = ajv.compile({ ...challengeSchema, $id: undefined });
      expect(validate(response.json()), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(first?.json().signature).not.toBe(second?.json().signature);
  });

  it(`is limited to ${CHALLENGE_RATE_LIMIT.max} a minute per client address: then 429 problem+json with Retry-After`, async () => {
    testApp = await startTestApp({ env: FILTERED, startWorker: false, challengeRateLimit: CHALLENGE_RATE_LIMIT });
    for (let i = 0; i < CHALLENGE_RATE_LIMIT.max; i++) expect((await getChallenge()).statusCode).toBe(200);
    const refused = await getChallenge();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(refused.json()).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The inquiries themselves are not limited by it.
    expect((await post()).statusCode).toBe(200);
  });
});

describe('POST /api/contact with the page’s signals', () => {
  it('counts a valid proof for the inquiry (valid_proof, −2), once: sent again, it counts against (invalid_proof)', async () => {
    testApp = await start();
    const proof = await freshProof();
    const first = await post({ altcha: proof });
    expect(first.statusCode).toBe(200);
    expect(await judgementOf(referenceOf(first.body))).toEqual({
      verdict: 'inbox',
      score: -2,
      reasons: [{ code: 'valid_proof', detail: 'a fresh, valid proof of work' }],
    });
    const again = await post({ altcha: proof });
    expect(again.statusCode).toBe(200);
    expect(await judgementOf(referenceOf(again.body))).toEqual({
      verdict: 'inbox',
      score: 2,
      reasons: [{ code: 'invalid_proof', detail: 'invalid, stale or replayed proof of work' }],
    });
  });

  it('counts no proof neither way: agents and API clients never need one', async () => {
    testApp = await start();
    const response = await post();
    expect(await judgementOf(referenceOf(response.body))).toEqual({ verdict: 'inbox', score: 0, reasons: [] });
  });

  it('quarantines an inquiry whose honeypot was filled, answers it exactly as any other, and queues no delivery', async () => {
    testApp = await start();
    const inbox = await post({ altcha: await freshProof() });
    const trapped = await post({ altcha: await freshProof(), honeypot: 'filled' });
    expect(trapped.statusCode).toBe(inbox.statusCode);
    expect(trapped.body.replace(referenceOf(trapped.body), 'REF')).toBe(inbox.body.replace(referenceOf(inbox.body), 'REF'));
    expect(Object.keys(trapped.headers).sort()).toEqual(Object.keys(inbox.headers).sort());
    for (const name of ['content-type', 'inquiry-outcome', 'cache-control', 'content-security-policy']) {
      expect(trapped.headers[name], name).toEqual(inbox.headers[name]);
    }
    const judgement = await judgementOf(referenceOf(trapped.body));
    expect(judgement?.verdict).toBe('spam');
    expect(judgement?.reasons.map((reason) => reason.code)).toEqual(['honeypot', 'valid_proof']);
    expect(await testApp.services.store.outbox.forReference(referenceOf(trapped.body))).toEqual([]);
    expect(await testApp.services.store.outbox.forReference(referenceOf(inbox.body))).toHaveLength(1);
  });

  it('takes a malformed proof for an invalid one, never a 4xx: the answer is that of any accepted inquiry', async () => {
    testApp = await start();
    for (const altcha of ['not base64!', encodeProof({ challenge: {}, solution: {} }), 'e30=', 'x'.repeat(20_000)]) {
      const response = await post({ altcha });
      expect(response.statusCode, altcha.slice(0, 40)).toBe(200);
      expect(await codesOf(response.body)).toEqual(['invalid_proof']);
    }
  });

  it('never answers anything but 200 to an inquiry, whatever its Altcha and Honeypot headers hold', async () => {
    testApp = await start();
    // Header values as HTTP carries them: visible ASCII and spaces, none leading or trailing.
    const value = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(value, value, async (altcha, honeypot) => {
        const headers = Object.fromEntries(
          Object.entries({ altcha: altcha.trim(), honeypot: honeypot.trim() }).filter(([, text]) => text !== ''),
        );
        const response = await post(headers);
        expect(response.statusCode).toBe(200);
        const codes = await codesOf(response.body);
        expect(codes?.includes('invalid_proof')).toBe('altcha' in headers);
        expect(codes?.includes('honeypot')).toBe('honeypot' in headers);
      }),
      { numRuns: 60 },
    );
  });

  it('answers a retry with the same Idempotency-Key as the first time, its stored verdict unchanged by the retry’s proof', async () => {
    testApp = await start();
    const body = validInquiry({ message: 'Sent twice, with the same key: a website for us.' });
    const key = '4d9c3f7e-0a55-4a3c-9a5e-7d1b2c3e4f50';
    const proof = await freshProof();
    const first = await post({ 'idempotency-key': key, altcha: proof }, body);
    const retry = await post({ 'idempotency-key': key, altcha: proof }, body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(referenceOf(retry.body)).toBe(referenceOf(first.body));
    expect(await codesOf(first.body)).toEqual(['valid_proof']);
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
  });

  it('lets a page of an allowed origin send Altcha and Honeypot (CORS preflight)', async () => {
    testApp = await start();
    const preflight = await testApp.app.inject({
      method: 'OPTIONS',
      url: '/api/contact',
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key, altcha, honeypot',
      },
    });
    expect(preflight.statusCode).toBe(204);
    const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'idempotency-key', 'altcha', 'honeypot']));
  });

  it('leaves MCP inquiries alone: the tool reads neither header', async () => {
    testApp = await start();
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        altcha: await freshProof(),
        honeypot: 'filled',
      },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'submit_inquiry', arguments: validInquiry({ message: 'Sent by an agent: a website for us.' }) },
      }),
    });
    expect(response.statusCode).toBe(200);
    expect(await codesOf(response.body)).toEqual([]);
  });
});

// POST /api/contact in process (app.inject): the happy path, every documented error, idempotency,
// duplicate folding, the rate limit (an inquiry not stored uses none of it) and the 405 for other methods.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { REFERENCE_PATTERN } from '../../src/inquiries/reference.js';
import { INQUIRY_LIMITS } from '../../src/inquiries/schema.js';
import { openDatabase } from '../../src/storage/database.js';
import { referenceOf, startTestApp, type TestApp, tempDir, validInquiry } from '../helpers/app.js';
import { TEST_WEBHOOK_SECRET } from '../helpers/webhook.js';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

// A webhook channel pointing at a closed port: deliveries stay pending and the test can count them.
const WITH_WEBHOOK = { WEBHOOK_URL: 'http://127.0.0.1:9/never', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };

const post = (body: unknown, headers: Record<string, string | string[]> = {}) =>
  testApp.app.inject({
    method: 'POST',
    url: '/api/contact',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });

describe('POST /api/contact accepts an inquiry', () => {
  it('answers 200 text/plain naming the studio, the response time and a reference, and stores it with its delivery', async () => {
    testApp = await startTestApp({ env: WITH_WEBHOOK, startWorker: false });
    const response = await post(validInquiry());
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toContain(testApp.profile.name);
    expect(response.body).toContain('within 24 hours');
    const reference = referenceOf(response.body);
    expect(reference).toMatch(REFERENCE_PATTERN);

    const stored = await testApp.services.store.inquiries.findByReference(reference);
    expect(stored).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      company: 'Analytical Engines Ltd',
      clientId: null,
      source: 'api',
    });
    const deliveries = await testApp.services.store.outbox.forReference(reference);
    expect(deliveries.map((d) => [d.channel, d.status])).toEqual([['webhook', 'pending']]);
  });

  it('records an inquiry sent from a page of PUBLIC_URL (its Origin) as from the contact page', async () => {
    testApp = await startTestApp({ startWorker: false });
    const origin = new URL(testApp.config.publicUrl).origin;
    const sourceOf = async (headers: Record<string, string>) =>
      (
        await testApp.services.store.inquiries.findByReference(
          referenceOf(
            (
              await post(validInquiry({ message: `A website for our shop, sent with ${JSON.stringify(headers)}` }), headers)
            ).body,
          ),
        )
      )?.source;
    expect(await sourceOf({ origin })).toBe('page');
    expect(await sourceOf({ origin: 'https://elsewhere.example' })).toBe('api');
    expect(await sourceOf({})).toBe('api');
  });

  it('accepts an inquiry without company, and with maximum-length fields', async () => {
    testApp = await startTestApp({ startWorker: false });
    const { company: _omitted, ...withoutCompany } = validInquiry();
    expect((await post(withoutCompany)).statusCode).toBe(200);
    const longest = validInquiry({
      firstName: 'F'.repeat(INQUIRY_LIMITS.nameMaxLength),
      lastName: 'L'.repeat(INQUIRY_LIMITS.nameMaxLength),
      company: 'C'.repeat(INQUIRY_LIMITS.companyMaxLength),
      email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
      message: 'M'.repeat(INQUIRY_LIMITS.messageMaxLength),
    });
    expect(longest.email.length).toBe(INQUIRY_LIMITS.emailMaxLength);
    expect((await post(longest)).statusCode).toBe(200);
  });

  it('stores a blank company ("", spaces, a line break) as none, as one left out', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const [i, company] of ['', '   ', '\n\t '].entries()) {
      const response = await post(validInquiry({ company, message: `blank company ${i}` }));
      expect(response.statusCode).toBe(200);
      const stored = await testApp.services.store.inquiries.findByReference(referenceOf(response.body));
      expect(stored?.company, JSON.stringify(company)).toBeNull();
    }
    const named = await post(validInquiry({ company: ' Analytical Engines ', message: 'named company' }));
    expect((await testApp.services.store.inquiries.findByReference(referenceOf(named.body)))?.company).toBe(' Analytical Engines ');
  });

  it('never lets an Authorization header block an inquiry', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await post(validInquiry(), { authorization: 'Bearer not-a-real-token' });
    expect(response.statusCode).toBe(200);
  });
});

describe('POST /api/contact rejects bad input with problem details', () => {
  it('lists every bad field as {pointer, detail}', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await post({ firstName: '   ', email: 'not-an-email', message: '', extra: 1, company: 5 });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = response.json();
    expect(body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, error: 'invalid_request' });
    const pointers = body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['/company', '/email', '/extra', '/firstName', '/lastName', '/message']);
    for (const error of body.errors) expect(error.detail).toEqual(expect.any(String));
    expect(body.errors).toContainEqual({ pointer: '/lastName', detail: 'is required' });
    expect(body.errors).toContainEqual({ pointer: '/extra', detail: 'is not an allowed property' });
  });

  it('counts names and messages of whitespace and invisible characters only as empty, and says so', async () => {
    testApp = await startTestApp({ startWorker: false });
    // Spaces; a zero-width space and joiner; a soft hyphen and a word joiner; a Hangul filler; bidi
    // overrides; a control character and NEL; a variation selector: nothing the studio can read.
    const blanks = [' \t\n ', '\u200b', '\u200b\u200d ', '\u00ad\u2060', '\u3164', '\u202e\u202c', '\u0001\u0085', '\ufe0f'];
    for (const field of ['firstName', 'lastName', 'message']) {
      for (const [i, blank] of blanks.entries()) {
        const response = await post(validInquiry({ [field]: blank, message: field === 'message' ? blank : `blank ${field} ${i}` }));
        expect(response.statusCode, JSON.stringify(blank)).toBe(400);
        expect(response.json().errors).toEqual([
          { pointer: `/${field}`, detail: 'must contain a visible character, not only spaces or invisible ones' },
        ]);
      }
    }
    // Beside a visible character they are text as any other: Persian's zero-width non-joiner, an
    // emoji's joiner, a leading space.
    for (const [i, name] of ['\u0645\u06cc\u200c\u0631\u0648\u062f', '\u{1F469}\u200d\u{1F4BB}', ' Ada', '\u200bAda'].entries()) {
      const response = await post(validInquiry({ firstName: name, message: `visible name ${i}` }));
      expect(response.statusCode, JSON.stringify(name)).toBe(200);
      expect((await testApp.services.store.inquiries.findByReference(referenceOf(response.body)))?.firstName).toBe(name);
    }
  });

  it('refuses the NUL character in every text field, and says so', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const field of ['firstName', 'lastName', 'company', 'message']) {
      for (const value of ['\u0000', 'Ada\u0000', ' \u0000 ']) {
        const response = await post(validInquiry({ [field]: value }));
        expect(response.statusCode).toBe(400);
        expect(response.json().errors).toEqual([{ pointer: `/${field}`, detail: 'must not contain the NUL character (U+0000)' }]);
      }
    }
  });

  it('refuses a lone surrogate in every text field, and keeps a paired one (any character) as sent', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const field of ['firstName', 'lastName', 'company', 'message']) {
      for (const value of ['\ud800', 'Ada \udfff', '\udc00\ud800']) {
        const response = await post(validInquiry({ [field]: value }));
        expect(response.statusCode).toBe(400);
        expect(response.json().errors).toEqual([
          { pointer: `/${field}`, detail: 'must be Unicode text: it has a lone surrogate (\\uD800-\\uDFFF)' },
        ]);
      }
    }
    const response = await post(validInquiry({ firstName: '\ud834\udd1e Clef', message: 'Astral \u{1F600} text' }));
    expect(response.statusCode).toBe(200);
    expect(await testApp.services.store.inquiries.findByReference(referenceOf(response.body))).toMatchObject({
      firstName: '\u{1D11E} Clef',
      message: 'Astral \u{1F600} text',
    });
  });

  it('publishes text patterns that mean the same to a client compiling them without the u flag (emoji pass, lone surrogates do not)', async () => {
    testApp = await startTestApp({ startWorker: false });
    const document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const properties = document.components.schemas.Inquiry.properties as Record<string, { pattern?: string }>;
    for (const field of ['firstName', 'lastName', 'company', 'message']) {
      const pattern = properties[field]?.pattern ?? '';
      for (const flags of ['', 'u']) {
        const check = new RegExp(pattern, flags);
        expect(check.test('Launch \u{1F680} soon'), `${field} /${flags}`).toBe(true);
        expect(check.test('\u{1F600}'), `${field} /${flags}`).toBe(true);
        expect(check.test('Ada \ud800'), `${field} /${flags}`).toBe(false);
        expect(check.test('\udc00\ud800'), `${field} /${flags}`).toBe(false);
      }
    }
  });

  it('refuses a body that is not UTF-8, and one under a Content-Encoding, rather than keeping something other than what was sent', async () => {
    testApp = await startTestApp({ startWorker: false });
    const json = JSON.stringify(validInquiry({ firstName: 'Zo' }));
    const at = json.indexOf('Zo') + 2;
    for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80]]) {
      const response = await post(Buffer.concat([Buffer.from(json.slice(0, at)), Buffer.from(bytes), Buffer.from(json.slice(at))]));
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_json', detail: 'The request body is not valid UTF-8.' });
    }
    for (const coding of ['gzip', 'br', 'deflate']) {
      const response = await post(Buffer.from(json), { 'content-type': 'application/json', 'content-encoding': coding });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({
        error: 'unsupported_media_type',
        detail: expect.stringContaining(`Content-Encoding ${coding}`),
      });
    }
    expect((await post(Buffer.from(json), { 'content-type': 'application/json', 'content-encoding': 'identity' })).statusCode).toBe(200);
  });

  it('enforces the documented maximum lengths', async () => {
    testApp = await startTestApp({ startWorker: false });
    const cases: [string, string][] = [
      ['firstName', 'x'.repeat(INQUIRY_LIMITS.nameMaxLength + 1)],
      ['lastName', 'x'.repeat(INQUIRY_LIMITS.nameMaxLength + 1)],
      ['company', 'x'.repeat(INQUIRY_LIMITS.companyMaxLength + 1)],
      ['email', `${'a'.repeat(INQUIRY_LIMITS.emailMaxLength)}@example.com`],
      ['message', 'x'.repeat(INQUIRY_LIMITS.messageMaxLength + 1)],
    ];
    for (const [field, value] of cases) {
      const response = await post(validInquiry({ [field]: value }));
      expect(response.statusCode, field).toBe(400);
      expect(response.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(`/${field}`);
    }
  });

  it('does not coerce types', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await post(validInquiry({ firstName: 42, company: null }));
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual(
      expect.arrayContaining([
        { pointer: '/firstName', detail: 'must be a string' },
        { pointer: '/company', detail: 'must be a string' },
      ]),
    );
  });

  it.each([
    ['invalid JSON', '{"firstName": "Ada",', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    ['an array', '[1, 2]', 'invalid_request'],
    ['a string', '"hello"', 'invalid_request'],
    ['null', 'null', 'invalid_request'],
    ['a prototype-poisoning key', '{"__proto__": {"admin": true}}', 'invalid_json'],
  ])('answers 400 for %s', async (_name, payload, error) => {
    testApp = await startTestApp({ startWorker: false });
    const response = await post(payload);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ status: 400, error });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'answers 415 for Content-Type %s',
    async (contentType) => {
      testApp = await startTestApp({ startWorker: false });
      const response = await post('firstName=Ada', { 'content-type': contentType });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({ status: 415, error: 'unsupported_media_type' });
    },
  );

  it('answers 415 for JSON in a charset other than UTF-8, instead of storing it garbled', async () => {
    testApp = await startTestApp({ startWorker: false });
    const inquiry = JSON.stringify(validInquiry({ firstName: 'Zo\u00eb' }));
    const encoded: [string, Buffer][] = [
      ['application/json; charset=iso-8859-1', Buffer.from(inquiry, 'latin1')],
      ['application/json; charset=utf-16', Buffer.from(inquiry, 'utf16le')],
      ['application/json;charset="Windows-1252"', Buffer.from(inquiry, 'latin1')],
      // Of two charsets, the one that is not UTF-8 (the body cannot be both).
      ['application/json; charset=utf-8; charset=latin1', Buffer.from(inquiry, 'latin1')],
    ];
    for (const [contentType, payload] of encoded) {
      const response = await post(payload, { 'content-type': contentType });
      expect(response.statusCode, contentType).toBe(415);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.json()).toMatchObject({ status: 415, error: 'unsupported_media_type', detail: expect.stringContaining('UTF-8') });
    }
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toEqual([]);
  });

  it('accepts JSON declared as UTF-8, in any letter case, and stores the text as sent', async () => {
    testApp = await startTestApp({ startWorker: false });
    // A charset inside another parameter's quoted value is no charset parameter (RFC 9110 §5.6.4).
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8', 'utf-8; foo="a;charset=latin1"', '"utf\\-8"']) {
      const response = await post(Buffer.from(JSON.stringify(validInquiry({ firstName: 'Zo\u00eb', message: charset }))), {
        'content-type': `application/json; charset=${charset}`,
      });
      expect(response.statusCode, charset).toBe(200);
      expect((await testApp.services.store.inquiries.findByReference(referenceOf(response.body)))?.firstName).toBe('Zo\u00eb');
    }
  });

  it('lists at most 50 bad fields, and says how many more were left off', async () => {
    testApp = await startTestApp({ startWorker: false });
    const unknownKeys = Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`k${i}`, 1]));
    const response = await post(validInquiry(unknownKeys));
    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(8 * 1024);
    const { errors } = response.json();
    expect(errors).toHaveLength(51);
    expect(errors[0]).toEqual({ pointer: '/k0', detail: 'is not an allowed property' });
    // The note keeps the {pointer, detail} shape: "" points at the body as a whole.
    expect(errors[50]).toEqual({ pointer: '', detail: expect.stringContaining('5950 more') });
  });

  it('answers 413 above 64 KiB', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await post(validInquiry({ message: 'x'.repeat(65 * 1024) }));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ status: 413, error: 'payload_too_large' });
  });

  it('stores nothing for a rejected inquiry', async () => {
    testApp = await startTestApp({ startWorker: false });
    await post(validInquiry({ email: 'nope' }));
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  it('is kept for 24 hours and forgotten after, by an instance as soon as it starts', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    testApp = await startTestApp({ dir, startWorker: false });
    const old = { 'idempotency-key': 'a-day-old' };
    const recent = { 'idempotency-key': 'nearly-a-day-old' };
    const first = await post(validInquiry(), old);
    const kept = await post(validInquiry({ message: 'A second project.' }), recent);
    await testApp.close();
    // The keys' times set back by 25 and 23 hours, a new instance starts on the same database.
    const opened = await openDatabase({ kind: 'sqlite', path: join(dir, 'studio.db') });
    const hoursAgo = (hours: number) => Date.now() - hours * 60 * 60 * 1000;
    await opened.db
      .updateTable('idempotency_keys')
      .set({ created_at: hoursAgo(25) })
      .where('key', '=', 'a-day-old')
      .execute();
    await opened.db
      .updateTable('idempotency_keys')
      .set({ created_at: hoursAgo(23) })
      .where('key', '=', 'nearly-a-day-old')
      .execute();
    await opened.db.destroy();
    testApp = await startTestApp({ dir, startWorker: false });
    const keys = async () => [...(await testApp.services.store.idempotency.findMany(['a-day-old', 'nearly-a-day-old'])).keys()];
    await vi.waitUntil(async () => (await keys()).length === 1, { timeout: 5_000, interval: 20 });
    expect(await keys()).toEqual(['nearly-a-day-old']);
    // The old key is free again: another inquiry with it is a new one, not a 422.
    const later = await post(validInquiry({ message: 'Another project entirely.' }), old);
    expect(later.statusCode).toBe(200);
    expect(referenceOf(later.body)).not.toBe(referenceOf(first.body));
    // The recent one still replays its answer.
    const replayed = await post(validInquiry({ message: 'A second project.' }), recent);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(referenceOf(replayed.body)).toBe(referenceOf(kept.body));
  });

  it('answers a repeated key and body with the same response, storing and delivering once', async () => {
    testApp = await startTestApp({ env: WITH_WEBHOOK, startWorker: false });
    const headers = { 'idempotency-key': '"6f1c2b8e-5d0a-4a57-9d3e-2b9f0f3c1a77"' };
    const first = await post(validInquiry(), headers);
    const again = await post(validInquiry(), headers);
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
    expect(await testApp.services.store.outbox.forReference(referenceOf(first.body))).toHaveLength(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    testApp = await startTestApp({ startWorker: false });
    const headers = { 'idempotency-key': 'key-order' };
    const first = await post('{"firstName":"A","lastName":"B","email":"a@b.co","message":"m"}', headers);
    const again = await post('{"message":"m","email":"a@b.co","lastName":"B","firstName":"A"}', headers);
    expect(again.body).toBe(first.body);
  });

  it('answers 422 when the key comes back with another body, and stores nothing new', async () => {
    testApp = await startTestApp({ startWorker: false });
    const headers = { 'idempotency-key': 'reused-key' };
    expect((await post(validInquiry(), headers)).statusCode).toBe(200);
    const other = await post(validInquiry({ message: 'A different project' }), headers);
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ status: 422, error: 'idempotency_key_reused' });
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
  });

  it('answers 400 for a malformed key', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const key of ['has space', 'x'.repeat(256), '""']) {
      const response = await post(validInquiry(), { 'idempotency-key': key });
      expect(response.statusCode, key).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_idempotency_key' });
    }
  });

  it('keeps concurrent requests with one key to one inquiry', async () => {
    testApp = await startTestApp({ startWorker: false });
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(validInquiry(), { 'idempotency-key': 'concurrent' })));
    expect(new Set(responses.map((r) => r.statusCode))).toEqual(new Set([200]));
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
    // Each one that found the key taken (stored, or claimed earlier in its batch) answers as the first did.
    expect(new Set(responses.map((r) => r.headers['inquiry-outcome']))).toEqual(new Set(['created']));
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await testApp.services.store.inquiries.list({ limit: 50 })).toHaveLength(1);
  });
});

describe('duplicate submissions', () => {
  it('folds the same email and message within 10 minutes into the first inquiry, without a second notification', async () => {
    testApp = await startTestApp({ env: WITH_WEBHOOK, startWorker: false });
    const first = await post(validInquiry());
    const again = await post(validInquiry({ email: 'ADA@example.com', firstName: 'Augusta' }));
    expect(referenceOf(again.body)).toBe(referenceOf(first.body));
    // Said, so that a client (the contact page) can tell the person their changes were not kept.
    expect(first.headers['inquiry-outcome']).toBe('created');
    expect(again.headers['inquiry-outcome']).toBe('duplicate');
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
    expect(await testApp.services.store.outbox.forReference(referenceOf(first.body))).toHaveLength(1);
  });

  it('folds a repeat sent with a new Idempotency-Key too, keeping the first as stored; the key then answers with its reference', async () => {
    testApp = await startTestApp({ env: WITH_WEBHOOK, startWorker: false });
    const first = await post(validInquiry({ company: 'Typo Ltd' }));
    const repeat = validInquiry({ firstName: 'Augusta', company: 'Correct Ltd' });
    const again = await post(repeat, { 'idempotency-key': 'repeat-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(referenceOf(again.body)).toBe(referenceOf(first.body));
    const stored = await testApp.services.store.inquiries.list({ limit: 10 });
    expect(stored).toEqual([expect.objectContaining({ firstName: 'Ada', company: 'Typo Ltd' })]);
    const replayed = await post(repeat, { 'idempotency-key': 'repeat-1' });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    // The same response as the first time: folded, so the client can still say the changes were not kept.
    expect(replayed.headers['inquiry-outcome']).toBe('duplicate');
    expect(replayed.body).toBe(again.body);
    expect(referenceOf(replayed.body)).toBe(referenceOf(first.body));
    expect(await testApp.services.store.outbox.forReference(referenceOf(first.body))).toHaveLength(1);
  });

  it('keeps different messages from one person apart', async () => {
    testApp = await startTestApp({ startWorker: false });
    const first = await post(validInquiry());
    const second = await post(validInquiry({ message: 'And a second project.' }));
    expect(referenceOf(second.body)).not.toBe(referenceOf(first.body));
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After and RateLimit headers beyond RATE_LIMIT_INQUIRIES per client', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '2/m' }, startWorker: false });
    const ok = await post(validInquiry({ message: 'one' }));
    expect(ok.headers['ratelimit-limit']).toBe('2');
    expect(ok.headers['ratelimit-remaining']).toBe('1');
    expect((await post(validInquiry({ message: 'two' }))).statusCode).toBe(200);
    const limited = await post(validInquiry({ message: 'three' }));
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.json()).toMatchObject({ status: 429, error: 'rate_limited' });
    // The rule as configured, and the wait that is left of the window.
    expect(limited.json().detail).toBe(
      `Too many inquiries from this address: at most 2 per minute. Try again in ${limited.headers['retry-after']} seconds.`,
    );
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(2);
  });

  it('does not count rejected bodies, so a person can correct mistakes', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    for (let i = 0; i < 3; i++) expect((await post(validInquiry({ email: 'typo' }))).statusCode).toBe(400);
    expect((await post(validInquiry())).statusCode).toBe(200);
  });

  it('does not count a request with a malformed Idempotency-Key', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    for (let i = 0; i < 3; i++) {
      const response = await post(validInquiry(), { 'idempotency-key': 'has space' });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        error: 'invalid_idempotency_key',
        detail:
          'Idempotency-Key must be 1-255 visible ASCII characters without spaces or double quotes (the key may be sent in quotes), such as a UUID.',
      });
    }
    expect((await post(validInquiry(), { 'idempotency-key': 'well-formed' })).statusCode).toBe(200);
  });

  it('refuses a double quote in the key, and several Idempotency-Key headers, each saying what is wrong', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const key of ['"', '"a"b"', 'a"b']) {
      const response = await post(validInquiry(), { 'idempotency-key': key });
      expect(response.statusCode, key).toBe(400);
      expect(response.json().detail, key).toContain('without spaces or double quotes');
    }
    const twice = await post(validInquiry(), { 'idempotency-key': ['same-key', 'same-key'] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json()).toMatchObject({ error: 'invalid_idempotency_key', detail: 'Send one Idempotency-Key header, not several.' });
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);
  });

  it('does not count a retry with an Idempotency-Key already answered: it is replayed past the limit', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    const first = await post(validInquiry(), { 'idempotency-key': 'lost-response-1' });
    expect(first.statusCode).toBe(200);
    for (let i = 0; i < 3; i++) {
      // The quoted form is the same key.
      const retry = await post(validInquiry(), { 'idempotency-key': i % 2 === 0 ? 'lost-response-1' : '"lost-response-1"' });
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
    }
    // Another body under that key is still refused as a conflict, not stored, and not counted.
    expect((await post(validInquiry({ message: 'another' }), { 'idempotency-key': 'lost-response-1' })).statusCode).toBe(422);
    // The allowance was used once, by the first request: new inquiries, keyed or not, are limited.
    expect((await post(validInquiry({ message: 'new' }), { 'idempotency-key': 'new-key' })).statusCode).toBe(429);
    expect((await post(validInquiry({ message: 'new, no key' }))).statusCode).toBe(429);
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
  });

  it('answers a retry from a read: while another process holds the write lock, it is replayed or refused at once', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '5/m' }, startWorker: false });
    const first = await post(validInquiry(), { 'idempotency-key': 'while-locked-1' });
    expect(first.statusCode).toBe(200);
    // Another writer (the sqlite3 shell, the CLI) holds the database's one write lock.
    const other = new SQLite(join(testApp.dir, 'studio.db'));
    other.exec('begin immediate');
    try {
      const started = performance.now();
      const retry = await post(validInquiry(), { 'idempotency-key': 'while-locked-1' });
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['inquiry-outcome']).toBe('created');
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
      // Not counted: the allowance left is the one the first request reported.
      expect(retry.headers['ratelimit-remaining']).toBeUndefined();
      const conflict = await post(validInquiry({ message: 'another' }), { 'idempotency-key': 'while-locked-1' });
      expect(conflict.statusCode).toBe(422);
      // Neither waited for the lock (a write would have, up to its 5 s timeout, and then failed).
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      other.exec('rollback');
      other.close();
    }
    const after = await post(validInquiry({ message: 'new' }));
    expect(after.headers['ratelimit-remaining']).toBe('3');
  });

  it('counts per client address', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, startWorker: false });
    const from = (remoteAddress: string, message: string) =>
      testApp.app.inject({ method: 'POST', url: '/api/contact', remoteAddress, payload: validInquiry({ message }) });
    expect((await from('192.0.2.1', 'a')).statusCode).toBe(200);
    expect((await from('192.0.2.1', 'b')).statusCode).toBe(429);
    expect((await from('192.0.2.2', 'c')).statusCode).toBe(200);
  });
});

describe('when the store fails', () => {
  it('answers 500 problem+json that says nothing was stored and leaks no internals', async () => {
    testApp = await startTestApp({ startWorker: false });
    await testApp.services.store.close();
    const response = await post(validInquiry());
    expect(response.statusCode).toBe(500);
    const body = response.json();
    expect(body).toMatchObject({ status: 500, error: 'inquiry_not_stored', requestId: expect.any(String) });
    expect(response.body).not.toMatch(/sqlite|kysely|node_modules|\/src\/|at \w+ \(|SELECT|INSERT/i);
  });
});

describe('an inquiry that was not stored', () => {
  /** submit_inquiry over MCP (a stateless POST /mcp), from the same client address as `post`. */
  const submitOverMcp = (args: Record<string, unknown>) =>
    testApp.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_inquiry', arguments: args } },
    });

  it('uses none of the allowance, over HTTP and MCP alike: the inquiries sent next within the limit are accepted', async () => {
    testApp = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '2/m' }, startWorker: false });
    // Another writer (the sqlite3 shell, the CLI) holds the database's write lock for longer than
    // a write waits for it (5 s): both inquiries are answered "not stored".
    const other = new SQLite(join(testApp.dir, 'studio.db'));
    other.exec('begin exclusive');
    let failed: Awaited<ReturnType<typeof post>>[];
    try {
      failed = await Promise.all([
        post(validInquiry({ message: 'not stored, HTTP' })),
        submitOverMcp(validInquiry({ message: 'not stored, MCP' })),
      ]);
    } finally {
      other.exec('rollback');
      other.close();
    }
    const [overHttp, overMcp] = failed;
    expect(overHttp?.statusCode).toBe(500);
    expect(overHttp?.json()).toMatchObject({ status: 500, error: 'inquiry_not_stored' });
    // Counted for nothing, so it claims no use of the allowance.
    expect(overHttp?.headers['ratelimit-remaining']).toBeUndefined();
    expect(overMcp?.json()).toMatchObject({
      result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('could not be stored') }] },
    });
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);

    // The whole allowance is left: two inquiries are accepted, and then the limit holds.
    const first = await post(validInquiry({ message: 'sent again, one' }));
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-remaining']).toBe('1');
    const second = await submitOverMcp(validInquiry({ message: 'sent again, two' }));
    expect(second.json().result.isError).toBeFalsy();
    const third = await post(validInquiry({ message: 'sent again, three' }));
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({ error: 'rate_limited', detail: expect.stringContaining('at most 2 per minute') });
    expect((await submitOverMcp(validInquiry({ message: 'sent again, four' }))).json()).toMatchObject({
      result: {
        isError: true,
        content: [{ text: expect.stringMatching(/^Rate limited: .*at most 2 per minute, over HTTP and MCP together/) }],
      },
    });
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(2);
  });
});

describe('/api/contact with another method than POST', () => {
  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH'] as const)('answers %s with 405, Allow: POST, whatever the body', async (method) => {
    testApp = await startTestApp({ startWorker: false });
    const bodies = [undefined, JSON.stringify(validInquiry()), '{"not json', 'x'.repeat(100 * 1024)];
    for (const payload of method === 'GET' || method === 'HEAD' ? [undefined] : bodies) {
      const response = await testApp.app.inject({
        method,
        url: '/api/contact?from=form',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
        ...(payload !== undefined && { payload }),
      });
      expect(response.statusCode, `${method} ${payload?.slice(0, 10)}`).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      // A page of an allowed origin reads the answer.
      expect(response.headers['access-control-allow-origin']).toBe('http://localhost:3000');
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      if (method === 'HEAD') continue;
      expect(response.json()).toMatchObject({
        status: 405,
        error: 'method_not_allowed',
        detail: expect.stringContaining('POST'),
      });
    }
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);
  });

  it('reads the path as the router does, still answers a CORS preflight, and leaves other paths 404', async () => {
    testApp = await startTestApp({ startWorker: false });
    // Routed to /api/contact by POST, so its other methods are told to use POST too.
    const encoded = await testApp.app.inject({ method: 'DELETE', url: '/api/%63ontact' });
    expect(encoded.statusCode).toBe(405);
    expect(encoded.headers.allow).toBe('POST');
    const preflight = await testApp.app.inject({
      method: 'OPTIONS',
      url: '/api/contact',
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    for (const url of ['/api/contact/', '/api/contacts', '/api/contact/extra']) {
      const response = await testApp.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

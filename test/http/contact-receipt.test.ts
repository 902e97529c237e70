// POST /api/contact's receipt: JSON when the client asks for it (the same shape as submit_inquiry's
// structured content, checked against the one schema), plain text otherwise; its outcome, replay
// flag and attribution (a valid token's client id, or null and why).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inquiryReceiptSchema } from '../../src/inquiries/receipt.js';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';

let testApp: TestApp;
beforeAll(async () => {
  testApp = await startTestApp({ startWorker: false, env: { RATE_LIMIT_INQUIRIES: '1000/m' } });
});
afterAll(async () => {
  await testApp?.close();
});

const isReceipt = new Ajv2020({ strict: false }).compile(inquiryReceiptSchema);

const post = (body: unknown, headers: Record<string, string> = {}) =>
  testApp.app.inject({
    method: 'POST',
    url: '/api/contact',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });

describe('POST /api/contact, the receipt', () => {
  it('answers JSON to Accept: application/json: the reference, outcome, attribution and the confirmation text', async () => {
    const response = await post(validInquiry({ message: 'receipt as JSON' }), { accept: 'application/json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers.vary).toMatch(/\bAccept\b/);
    const receipt = response.json();
    expect(isReceipt(receipt)).toBe(true);
    expect(receipt).toEqual({
      reference: expect.stringMatching(/^INQ-/),
      outcome: 'created',
      replayed: false,
      responseTime: '24 hours',
      confirmation: expect.stringContaining(`Your reference is ${receipt.reference}.`),
      attribution: { client_id: null, reason: 'no_token' },
    });
  });

  it.each([
    ['no Accept header', undefined],
    ['*/*', '*/*'],
    ['text/plain', 'text/plain'],
    ['text/plain first', 'text/plain, application/json;q=0.5'],
    ['both alike (the default wins)', 'application/json, text/plain'],
  ])('stays text/plain with %s', async (_case, accept) => {
    const response = await post(validInquiry({ message: `plain with ${_case}` }), accept === undefined ? {} : { accept });
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(referenceOf(response.body)).toMatch(/^INQ-/);
  });

  it('says a retry with the same Idempotency-Key is a replay, and a repeat of the same message a duplicate', async () => {
    const headers = { accept: 'application/json', 'idempotency-key': 'receipt-replay-1' };
    const first = (await post(validInquiry({ message: 'replayed receipt' }), headers)).json();
    const again = (await post(validInquiry({ message: 'replayed receipt' }), headers)).json();
    expect(again).toEqual({ ...first, replayed: true });
    const folded = (await post(validInquiry({ message: 'replayed receipt', company: 'Other' }), { accept: 'application/json' })).json();
    expect(folded).toMatchObject({ reference: first.reference, outcome: 'duplicate', replayed: false });
  });

  it("names a valid token's client, and says why a bad one was not taken, with the inquiry sent all the same", async () => {
    const registration = await testApp.services.auth.register({ type: 'anonymous', client_name: 'Receipt agent' });
    const { access_token } = await testApp.services.auth.token({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: String(registration.body.identity_assertion),
    });
    const named = await post(validInquiry({ message: 'attributed receipt' }), {
      accept: 'application/json',
      authorization: `Bearer ${access_token}`,
    });
    expect(named.json().attribution).toEqual({ client_id: registration.body.client_id, reason: null });

    const refused = await post(validInquiry({ message: 'bad token receipt' }), {
      accept: 'application/json',
      authorization: 'Bearer nope',
    });
    expect(refused.statusCode).toBe(200);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    const receipt = refused.json();
    expect(isReceipt(receipt)).toBe(true);
    expect(receipt.attribution).toEqual({
      client_id: null,
      reason: 'invalid_token',
      detail: expect.stringContaining(`${testApp.config.publicUrl}/.well-known/oauth-protected-resource`),
    });
    const stored = await testApp.services.store.inquiries.findByReference(receipt.reference);
    expect(stored?.clientId).toBeNull();
  });
});

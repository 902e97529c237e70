// The agent-auth endpoints under arbitrary input (fast-check): never a 5xx, always the documented
// error shape (problem+json with `error` on /agent/*, RFC 6749 JSON on /oauth/*); and their
// per-address rate limits.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
beforeAll(async () => {
  testApp = await startTestApp({ env: { SMTP_URL: 'smtp://127.0.0.1:9', INQUIRY_TO: 'studio@example.com' }, startWorker: false });
});
afterAll(async () => {
  await testApp.close();
});

const REGISTER_CODES = [
  'invalid_request',
  'invalid_json',
  'unsupported_identity_type',
  'unsupported_assertion_type',
  'invalid_assertion',
  'issuer_not_enabled',
];
const CLAIM_CODES = ['invalid_request', 'invalid_json', 'invalid_claim_token'];
const OAUTH_CODES = ['invalid_request', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope', 'invalid_target'];

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    'anonymous',
    'identity_assertion',
    'verified_email',
    'urn:ietf:params:oauth:token-type:id-jag',
    'urn:ietf:params:oauth:grant-type:jwt-bearer',
    'a.b.c',
    'x@y.z',
  ),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
);
const keys = fc.constantFrom(
  'type',
  'client_name',
  'client_uri',
  'assertion_type',
  'assertion',
  'email',
  'claim_token',
  'otp',
  'grant_type',
  'subject_token',
  'subject_token_type',
  'scope',
  'resource',
  'token',
  'zzz',
);
const body = fc.oneof(fc.dictionary(keys, value, { maxKeys: 6 }), fc.jsonValue({ maxDepth: 2 }));

describe.each([
  ['/agent/register', REGISTER_CODES, 'application/problem+json'],
  ['/agent/claim', CLAIM_CODES, 'application/problem+json'],
  ['/oauth/token', OAUTH_CODES, 'application/json'],
  ['/oauth/revoke', OAUTH_CODES, 'application/json'],
])('POST %s with arbitrary JSON', (url, codes, contentType) => {
  it('never answers 5xx, and names a documented error code', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const response = await testApp.app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
        expect(response.statusCode).toBeLessThan(500);
        if (response.statusCode >= 400) {
          expect(response.headers['content-type']).toMatch(new RegExp(`^${contentType.replace('+', '\\+')}`));
          expect(codes).toContain(response.json().error);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('POST /oauth/token with arbitrary form bodies', () => {
  it('never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (payload) => {
        const response = await testApp.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload,
        });
        expect(response.statusCode).toBeLessThan(500);
        expect(response.headers['cache-control']).toBe('no-store');
      }),
      { numRuns: 300 },
    );
  });
});

describe('rate limits', () => {
  it('answer 429 with Retry-After past the per-address limit of /agent/register', async () => {
    const limited = await startTestApp({
      startWorker: false,
      authRateLimits: {
        register: { max: 2, timeWindow: 60_000 },
        claim: { max: 2, timeWindow: 60_000 },
        token: { max: 2, timeWindow: 60_000 },
        revoke: { max: 2, timeWindow: 60_000 },
        authorize: { max: 2, timeWindow: 60_000 },
      },
    });
    try {
      const register = () =>
        limited.app.inject({ method: 'POST', url: '/agent/register', payload: { type: 'anonymous', client_name: 'a' } });
      expect((await register()).statusCode).toBe(201);
      expect((await register()).statusCode).toBe(201);
      const third = await register();
      expect(third.statusCode).toBe(429);
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect(third.json()).toMatchObject({ status: 429, error: 'rate_limited' });
      const token = () => limited.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'x' } });
      await token();
      await token();
      const limitedToken = await token();
      expect(limitedToken.statusCode).toBe(429);
      expect(limitedToken.json()).toMatchObject({ error: 'rate_limited' });
    } finally {
      await limited.close();
    }
  });
});

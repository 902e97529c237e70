// ID-JAGs that a trusted issuer really signed, with arbitrary claim values (fast-check), redeemed at
// /agent/register and /oauth/token on each database: a claim the service cannot keep is refused as
// invalid_assertion / invalid_grant, never a 5xx from a failed write.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CLAIM_LENGTH } from '../../src/auth/id-jag.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';

const PUBLIC_URL = 'https://studio.example';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let idp: IdJagIssuer;
beforeAll(async () => {
  idp = await startIdJagIssuer();
});
afterAll(async () => {
  await idp.close();
});

/** Text of any length around the limit, of characters up to four UTF-8 bytes each. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
  fc.integer({ min: MAX_CLAIM_LENGTH - 2, max: MAX_CLAIM_LENGTH + 2 }).map((length) => '𝄞'.repeat(length / 2) + 'x'.repeat(length % 2)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }),
);
/**
 * Longer than an index entry of PostgreSQL holds (2,704 bytes) yet inside the request's limits:
 * one such claim an assertion.
 */
const long = fc.oneof(
  fc.integer({ min: 700, max: 900 }).map((length) => '𝄞'.repeat(length)),
  fc.string({ unit: 'binary', minLength: 700, maxLength: 900 }).map((value) => value.replaceAll('\u0000', '')),
);
const seconds = () => Math.floor(Date.now() / 1000);
/** From just valid to past the last date JavaScript has (8.64e12 s). */
const expiry = fc.oneof(
  fc.integer({ min: 60, max: 3_600 }).map((ahead) => seconds() + ahead),
  fc.constantFrom(8.64e12 - 10, 8.64e12, 8.64e12 + 1, 1e300),
);

describe.each(BACKENDS)('ID-JAGs with arbitrary claims on $name', ({ fresh }) => {
  let database: FreshDatabase;
  let testApp: TestApp;
  beforeAll(async () => {
    database = await fresh();
    testApp = await startTestApp({
      env: { DATABASE_URL: database.url, PUBLIC_URL, TRUSTED_ISSUERS: JSON.stringify({ [idp.issuer]: idp.jwksUrl }) },
      startWorker: false,
    });
  });
  afterAll(async () => {
    await testApp?.close();
    await database?.drop();
  });

  it('are registered or refused as invalid_assertion, and redeemed or refused as invalid_grant, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ sub: text, jti: text, client_id: text, email: fc.option(text, { nil: undefined }), exp: expiry }),
        fc.option(fc.tuple(fc.constantFrom('sub', 'jti', 'client_id', 'email'), long), { nil: undefined }),
        async (short, longer) => {
          const claims = longer === undefined ? short : { ...short, [longer[0]]: longer[1] };
          // Unique per run, so that only a claim's value (not a replay) decides.
          const jti = `${claims.jti}${crypto.randomUUID()}`.slice(-Math.max(claims.jti.length, 36));
          const keepable = [claims.sub, claims.client_id, claims.email ?? ''].every((claim) => claim.length <= MAX_CLAIM_LENGTH);
          const assertion = await idp.sign(PUBLIC_URL, { ...claims, jti });
          const register = await testApp.app.inject({
            method: 'POST',
            url: '/agent/register',
            payload: { type: 'identity_assertion', assertion_type: ID_JAG, assertion },
          });
          expect(register.statusCode, register.body).toBeLessThan(500);
          // An assertion above the request's limit on its length (8,000) is refused as such.
          const refusal = assertion.length > 8_000 ? 'invalid_request' : 'invalid_assertion';
          if (register.statusCode !== 201) expect(register.json()).toMatchObject({ status: 400, error: refusal });
          else expect(keepable && jti.length <= MAX_CLAIM_LENGTH && claims.exp < 8.64e12 - 30).toBe(true);

          const token = await testApp.app.inject({
            method: 'POST',
            url: '/oauth/token',
            payload: {
              grant_type: JWT_BEARER,
              assertion: await idp.sign(PUBLIC_URL, { ...claims, jti: `${jti}-token`.slice(-jti.length) }),
            },
          });
          expect(token.statusCode, token.body).toBeLessThan(500);
          if (token.statusCode !== 200) expect(token.json()).toMatchObject({ error: 'invalid_grant' });
          // The same verdict at both doors (the token endpoint takes longer assertions).
          if (refusal === 'invalid_assertion') expect(token.statusCode === 200).toBe(register.statusCode === 201);
        },
      ),
      { numRuns: 40 },
    );
  });

  it(`keep claims of ${MAX_CLAIM_LENGTH} characters, nearly all of four UTF-8 bytes, and refuse one more`, async () => {
    const longest = '𝄞'.repeat(MAX_CLAIM_LENGTH / 2) + 'x'.repeat(MAX_CLAIM_LENGTH % 2);
    const register = async (claims: Record<string, unknown>) =>
      testApp.app.inject({
        method: 'POST',
        url: '/agent/register',
        payload: { type: 'identity_assertion', assertion_type: ID_JAG, assertion: await idp.sign(PUBLIC_URL, claims) },
      });
    expect((await register({ sub: longest, jti: longest })).statusCode).toBe(201);
    for (const claim of ['sub', 'jti', 'client_id', 'email']) {
      const refused = await register({ [claim]: `${longest}y` });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({
        error: 'invalid_assertion',
        detail: `the assertion's ${claim} must be at most ${MAX_CLAIM_LENGTH} characters`,
      });
    }
  });
});

// The email claim of an ID-JAG signed by a real issuer (own keys, JWKS on 127.0.0.1): kept only when an
// address by the verified_email rule (format email, at most 254 characters), otherwise taken as absent;
// the identity is iss + sub, so an invalid email costs the agent nothing but the email on file.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssertionError, createIdJagVerifier, MAX_CLAIM_LENGTH } from '../../src/auth/id-jag.js';
import { verifiedEmailRegistrationSchema } from '../../src/auth/schemas.js';
import { ajv, hasLoneSurrogate } from '../../src/validation/ajv.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';

const AUDIENCE = 'https://studio.example';

let issuer: IdJagIssuer;
beforeAll(async () => {
  issuer = await startIdJagIssuer();
});
afterAll(async () => {
  await issuer.close();
});

const verifier = () =>
  createIdJagVerifier({ audience: AUDIENCE, trustedIssuers: { [issuer.issuer]: issuer.jwksUrl }, useAssertion: async () => true });

/** What POST /agent/register accepts as the email of a verified_email registration: the oracle. */
const validateRegistration = ajv.compile(verifiedEmailRegistrationSchema);
const registrationAccepts = (email: string) =>
  validateRegistration({ type: 'identity_assertion', assertion_type: 'verified_email', email, client_name: 'Agent' });

/** A valid address of `length` characters (201 to 264), but for its length: a 199-character domain of 63-character labels. */
const DOMAIN = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.example`;
const addressOf = (length: number) => `${'a'.repeat(length - DOMAIN.length - 1)}@${DOMAIN}`;

describe('the email claim of an ID-JAG', () => {
  it('is kept as sent when it is an address', async () => {
    for (const email of ['ada@example.com', 'Ada.Lovelace+agents@mail.example.co.uk', addressOf(254)]) {
      expect(registrationAccepts(email), email).toBe(true);
      await expect(verifier().verify(await issuer.sign(AUDIENCE, { email }))).resolves.toMatchObject({ subject: 'user-1234', email });
    }
  });

  it('is taken as absent when it is no address, or longer than 254 characters: the assertion is still verified', async () => {
    const notAddresses = [
      'not-an-email',
      'a\r\nBcc: x@evil.example',
      'owner@example.com\r\nBcc: x@evil.example',
      'Ada <ada@example.com>',
      ' ada@example.com',
      'ada@example.com ',
      '',
      '@example.com',
      'ada@',
      addressOf(255),
    ];
    expect([addressOf(254), addressOf(255)].map((address) => address.length)).toEqual([254, 255]);
    for (const email of notAddresses) {
      expect(registrationAccepts(email), JSON.stringify(email)).toBe(false);
      await expect(verifier().verify(await issuer.sign(AUDIENCE, { email })), JSON.stringify(email)).resolves.toMatchObject({
        issuer: issuer.issuer,
        subject: 'user-1234',
        clientId: 'agent-client',
        email: null,
      });
    }
  });

  it('of any text: kept exactly when the verified_email registration would take it, else null; refused only as before', async () => {
    const separators = fc.constantFrom('\r\n', '\n', '\r', ' ', '\t', '\u0085', '\u2028', ',', ';', '<', '>', '"');
    const email = fc.oneof(
      fc.emailAddress(),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc
        .tuple(fc.emailAddress(), separators, fc.string({ maxLength: 30 }))
        .map(([address, separator, rest]) => `${address}${separator}${rest}`),
      fc
        .tuple(fc.string({ maxLength: 10 }), separators, fc.emailAddress())
        .map(([head, separator, address]) => `${head}${separator}${address}`),
      fc.integer({ min: 240, max: 260 }).map(addressOf),
    );
    await fc.assert(
      fc.asyncProperty(email, async (claim) => {
        const outcome = await verifier()
          .verify(await issuer.sign(AUDIENCE, { email: claim }))
          .catch((error: unknown) => error);
        // Refused only where every text claim is (the NUL character, a lone surrogate, over 255 characters).
        if (outcome instanceof AssertionError) {
          expect(outcome.code).toBe('invalid_assertion');
          expect(outcome.message).toMatch(/^the assertion's email must /);
          expect(claim.includes('\u0000') || hasLoneSurrogate(claim) || claim.length > MAX_CLAIM_LENGTH).toBe(true);
          return;
        }
        expect(outcome).toMatchObject({ subject: 'user-1234' });
        const kept = (outcome as { email: string | null }).email;
        expect(kept).toBe(registrationAccepts(claim) ? claim : null);
        if (kept !== null) expect(kept).not.toMatch(/[\s<>,;"]/);
      }),
      { numRuns: 300 },
    );
  });
});

// Verifies ID-JAG identity assertions (draft-ietf-oauth-identity-assertion-authz-grant) from the
// TRUSTED_ISSUERS, redeemed once each (issuer, jti) at /agent/register and /oauth/token (docs/agent-auth.md).
// Error messages reach clients: they say what is wrong, never echo the token or reveal configuration.
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose';
import { ajv, hasLoneSurrogate } from '../validation/ajv.js';
import { verifiedEmailRegistrationSchema } from './schemas.js';

/** The JWT `typ` header of an ID-JAG (draft §3: "oauth-id-jag+jwt"). */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** Asymmetric only: the issuer signs, we verify with its public keys (RFC 8725 §3.1, §3.2). */
export const ID_JAG_ALGORITHMS = ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'];
/** Allowed clock skew between the issuer and this service, in seconds (RFC 7519 §4.1.4 "small leeway"). */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** Far above any real ID-JAG; refuses absurd input before it is decoded. */
const MAX_ASSERTION_LENGTH = 16_384;
/**
 * The longest text claim kept, in characters: OpenID Connect's limit on sub (Core §2), ample for a
 * jti, a client_id or an address. Claims are keys of indexes (issuer + jti, issuer + sub), whose
 * entries PostgreSQL caps at 2,704 bytes: a longer claim is refused here, not by a failed write.
 */
export const MAX_CLAIM_LENGTH = 255;
/** Scopes are kept as given, space-separated, in one claim. */
const MAX_SCOPE_LENGTH = 1_024;

export interface VerifiedIdJag {
  issuer: string;
  subject: string;
  clientId: string | null;
  email: string | null;
  jti: string;
  expiresAt: Date;
  scope: string | null;
}

export class AssertionError extends Error {
  constructor(
    readonly code: 'invalid_assertion' | 'issuer_not_enabled' | 'replay_detected',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AssertionError';
  }
}

export interface IdJagVerifierOptions {
  /** This service's issuer identifier (the expected `aud`). */
  audience: string;
  /** TRUSTED_ISSUERS: issuer → JWKS URL. Empty = the id-jag type is not enabled. */
  trustedIssuers: Readonly<Record<string, string>>;
  /** Records (issuer, jti) and returns false if it was seen before (AuthStore.useAssertion). */
  useAssertion(issuer: string, jti: string, expiresAt: Date): Promise<boolean>;
  now?: () => Date;
}

/**
 * An address by the rule of the verified_email registration (format email, at most 254 characters),
 * the one every email this service keeps, returns (Registration.email) and signs has passed.
 */
const isEmailAddress = ajv.compile<string>(verifiedEmailRegistrationSchema.properties.email);

const invalid = (message: string, cause?: unknown) => new AssertionError('invalid_assertion', message, cause ? { cause } : undefined);
const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

export function createIdJagVerifier(options: IdJagVerifierOptions): { verify(assertion: string): Promise<VerifiedIdJag> } {
  const { audience, trustedIssuers, useAssertion } = options;
  const now = options.now ?? (() => new Date());
  // One getter per issuer, made on first use: jose caches the key set, refetches on an unknown kid
  // (key rotation) and rate-limits refetches with its cooldown.
  const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
  const keySetOf = (issuer: string, jwksUrl: string) => {
    let keySet = keySets.get(issuer);
    if (!keySet) {
      keySet = createRemoteJWKSet(new URL(jwksUrl));
      keySets.set(issuer, keySet);
    }
    return keySet;
  };

  return {
    async verify(assertion) {
      // TRUSTED_ISSUERS unset: the id-jag type answers issuer_not_enabled (docs/agent-auth.md).
      if (Object.keys(trustedIssuers).length === 0) {
        throw new AssertionError('issuer_not_enabled', 'ID-JAG assertions are not enabled on this service');
      }
      if (typeof assertion !== 'string' || assertion.length > MAX_ASSERTION_LENGTH) throw invalid('the assertion is not a JWT');

      let header: ReturnType<typeof decodeProtectedHeader>;
      let unverified: JWTPayload;
      try {
        header = decodeProtectedHeader(assertion);
        unverified = decodeJwt(assertion);
      } catch {
        throw invalid('the assertion is not a well-formed JWT');
      }
      // Draft §3 / RFC 8725 §3.11: explicit typing keeps other JWTs (ID tokens, access tokens) out.
      if (typeof header.typ !== 'string' || header.typ.toLowerCase().replace(/^application\//, '') !== ID_JAG_TYP) {
        throw invalid(`the assertion's typ header must be ${ID_JAG_TYP}`);
      }
      // RFC 8725 §3.1/§3.2: never `none`, never a shared-secret MAC (the JWKS holds public keys only).
      if (typeof header.alg !== 'string' || !ID_JAG_ALGORITHMS.includes(header.alg)) {
        throw invalid(`the assertion's alg must be one of ${ID_JAG_ALGORITHMS.join(', ')}`);
      }
      // The unverified iss only selects which keys to check the signature with (draft §3, RFC 7523 §3).
      if (!nonEmptyString(unverified.iss)) throw invalid('the assertion must contain the iss claim');
      const jwksUrl = Object.hasOwn(trustedIssuers, unverified.iss) ? trustedIssuers[unverified.iss] : undefined;
      if (jwksUrl === undefined) throw new AssertionError('issuer_not_enabled', "the assertion's issuer is not trusted by this service");
      const issuer = unverified.iss;

      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(assertion, keySetOf(issuer, jwksUrl), {
          algorithms: ID_JAG_ALGORITHMS,
          typ: ID_JAG_TYP,
          issuer,
          audience, // RFC 7523 §3 item 3: aud must identify this authorization server (string or array).
          requiredClaims: ['iss', 'sub', 'aud', 'client_id', 'jti', 'exp', 'iat'], // draft §3: required claims.
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: now(),
        }));
      } catch (error) {
        throw describe(error, audience);
      }

      // jose checks presence, iss, aud and the dates; the types of the other claims are checked here.
      if (!nonEmptyString(payload.sub)) throw invalid('the assertion must contain the sub claim');
      if (!nonEmptyString(payload.jti)) throw invalid('the assertion must contain the jti claim');
      // jose checks iat only with maxTokenAge: an assertion issued in the future is not yet valid.
      if ((payload.iat as number) > now().getTime() / 1000 + CLOCK_TOLERANCE_SECONDS) throw invalid('the assertion is not yet valid');
      for (const claim of ['client_id', 'email', 'scope'] as const) {
        if (payload[claim] !== undefined && typeof payload[claim] !== 'string') throw invalid(`the assertion's ${claim} must be a string`);
      }
      // Kept as text, some as keys of indexes: what a database cannot keep as sent is refused here, not by a failed write.
      for (const claim of ['sub', 'jti', 'client_id', 'email', 'scope'] as const) {
        const text = payload[claim] as string | undefined;
        if (text === undefined) continue;
        if (text.includes('\u0000')) throw invalid(`the assertion's ${claim} must not contain the NUL character`);
        // Neither database keeps one as sent (PostgreSQL's driver writes each as U+FFFD, so two would be one subject).
        if (hasLoneSurrogate(text)) throw invalid(`the assertion's ${claim} must be Unicode text (it has a lone surrogate)`);
        const limit = claim === 'scope' ? MAX_SCOPE_LENGTH : MAX_CLAIM_LENGTH;
        if (text.length > limit) throw invalid(`the assertion's ${claim} must be at most ${limit} characters`);
      }
      // The email claim is optional and the assertion's identity is its iss + sub: one that is no
      // address ("not-an-email", "a\r\nBcc: …") is taken as absent, never kept, returned or signed.
      const email = typeof payload.email === 'string' && isEmailAddress(payload.email) ? payload.email : null;
      const expiresAt = new Date((payload.exp as number) * 1000);
      // RFC 7523 §3 item 7: a jti is accepted once. Checked only now, so an invalid token never burns
      // a jti. Kept until exp + tolerance, as long as the token itself could still be accepted.
      const keptUntil = new Date(expiresAt.getTime() + CLOCK_TOLERANCE_SECONDS * 1000);
      // jose takes any number as exp; one near or past the last date there is (year 275760) leaves no time to keep the jti until.
      if (Number.isNaN(keptUntil.getTime())) throw invalid("the assertion's exp claim is invalid");
      if (!(await useAssertion(issuer, payload.jti, keptUntil))) {
        throw new AssertionError('replay_detected', 'this assertion (its jti) has already been used');
      }
      return {
        issuer,
        subject: payload.sub,
        clientId: (payload.client_id as string | undefined) ?? null,
        email,
        jti: payload.jti,
        expiresAt,
        scope: (payload.scope as string | undefined) ?? null,
      };
    },
  };
}

/** A client-facing message for a jose failure; the jose error stays as `cause` for server logs. */
function describe(error: unknown, audience: string): AssertionError {
  if (error instanceof errors.JWTExpired) return invalid('the assertion has expired', error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return invalid(`the assertion must contain the ${error.claim} claim`, error);
    if (error.claim === 'aud') return invalid(`the assertion's aud must be ${audience}`, error);
    if (error.claim === 'nbf') return invalid('the assertion is not yet valid', error);
    return invalid(`the assertion's ${error.claim} claim is invalid`, error);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return invalid("the assertion's signature is not valid", error);
  if (error instanceof errors.JWKSNoMatchingKey) return invalid("no key of the issuer's JWKS matches the assertion's kid and alg", error);
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid)
    return invalid('the assertion is not a well-formed JWT', error);
  // JWKS unreachable, timed out, not JSON, or any other failure: nothing internal goes to the client.
  return invalid("the assertion could not be verified (the issuer's keys are unavailable); try again later", error);
}

// Agent registration, tokens, revocation and bearer use (docs/agent-auth.md). HTTP routes are
// thin doors onto these functions; everything durable lives in the AuthStore.
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt, type JWTPayload } from 'jose';
import { ValidationError } from '../errors.js';
import type { AgentClient, Store, Tx } from '../storage/ports.js';
import { ajv, toFieldErrors } from '../validation/ajv.js';
import { personVerified } from './agent-identity.js';
import type { Claims } from './claims.js';
import { codeLocks } from './code-limits.js';
import { AgentAuthError, OAuthError } from './errors.js';
import { AssertionError, type VerifiedIdJag } from './id-jag.js';
import type { SigningKeys } from './keys.js';
import {
  GRANT_TYPE_JWT_BEARER,
  GRANT_TYPE_TOKEN_EXCHANGE,
  INQUIRY_WRITE_SCOPE,
  SCOPES_SUPPORTED,
  TOKEN_TYPE_ACCESS_TOKEN,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_JWT,
} from './metadata.js';
import { resourceNamed, resourcesListed } from './resources.js';
import { anonymousRegistrationSchema, claimSchema, idJagRegistrationSchema, verifiedEmailRegistrationSchema } from './schemas.js';
import type { AuthUrls } from './urls.js';

export const IDENTITY_ASSERTION_TTL_SECONDS = 30 * 24 * 60 * 60;
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
/** RFC 9068 §2.1: access tokens say what they are, so no other JWT can pass for one. */
export const ACCESS_TOKEN_TYP = 'at+jwt';
/** The identity assertions this service issues are plain RFC 7523 JWTs. */
export const IDENTITY_ASSERTION_TYP = 'JWT';

const validateAnonymous = ajv.compile<{ type: 'anonymous'; client_name: string; client_uri?: string }>(anonymousRegistrationSchema);
const validateIdJag = ajv.compile<{ assertion: string; client_name?: string }>(idJagRegistrationSchema);
const validateVerifiedEmail = ajv.compile<{ email: string; client_name: string }>(verifiedEmailRegistrationSchema);
const validateClaim = ajv.compile<{ claim_token: string; email?: string; otp?: string }>(claimSchema);

/** Find-or-insert rounds for an ID-JAG's client: one, and one more where the winner of a race was revoked. */
const ID_JAG_CLIENT_ROUNDS = 2;

type ClientFields = Pick<AgentClient, 'clientName' | 'clientUri' | 'registrationType'> & Partial<AgentClient>;

export interface AuthenticatedClient {
  readonly clientId: string;
  readonly scope: string;
  /** Its registration was claimed: a verified email (at registration or by a claim) or ID-JAG. */
  readonly claimed: boolean;
  /** The address its person proved with a mailed code (an OAuth sign-in or a claim), or null. */
  readonly email: string | null;
}

/** A signed-in person behind an access token (docs/agent-auth.md, "Sign in with OAuth"). */
export interface VerifiedPerson {
  readonly clientId: string;
  readonly email: string;
  readonly scope: string;
}

export interface AgentAuthDeps {
  readonly store: Pick<Store, 'auth' | 'outbox' | 'transaction'>;
  readonly claims: Claims;
  readonly keys: SigningKeys;
  readonly urls: AuthUrls;
  /** Verifies ID-JAGs from TRUSTED_ISSUERS. */
  readonly idJag: { verify(assertion: string): Promise<VerifiedIdJag> };
  readonly now?: () => Date;
}

export type AgentAuth = ReturnType<typeof createAgentAuth>;

export function createAgentAuth({ store: db, claims, keys, urls, idJag, now = () => new Date() }: AgentAuthDeps) {
  const store = db.auth;
  async function issueIdentityAssertion(client: Pick<AgentClient, 'clientId' | 'email'>) {
    const issuedAt = now();
    const assertion = await keys.sign(
      {
        iss: urls.issuer,
        aud: urls.issuer,
        sub: client.clientId,
        client_id: client.clientId,
        jti: randomUUID(),
        ...(client.email !== null && { email: client.email }),
      },
      { typ: IDENTITY_ASSERTION_TYP, expiresInSeconds: IDENTITY_ASSERTION_TTL_SECONDS, now: issuedAt },
    );
    return { assertion, expires: new Date(issuedAt.getTime() + IDENTITY_ASSERTION_TTL_SECONDS * 1000) };
  }

  function registrationResponse(client: AgentClient, identity: { assertion: string; expires: Date }) {
    return {
      client_id: client.clientId,
      client_name: client.clientName,
      ...(client.clientUri !== null && { client_uri: client.clientUri }),
      registration_type: client.registrationType,
      ...(client.email !== null && { email: client.email }),
      identity_assertion: identity.assertion,
      identity_assertion_expires: identity.expires.toISOString(),
      scopes: [...SCOPES_SUPPORTED],
    };
  }

  /** POST /agent/register. Returns the HTTP status with the body (201 created). */
  async function register(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const type = (body as { type?: unknown } | null)?.type;
    if (type === 'anonymous') {
      if (!validateAnonymous(body)) throw new ValidationError(toFieldErrors(validateAnonymous.errors ?? []));
      const fields = { clientName: body.client_name.trim(), clientUri: body.client_uri ?? null, registrationType: 'anonymous' } as const;
      // The claim is offered only where codes can be mailed.
      const prepared = claims.emailEnabled ? await claims.prepare(null) : null;
      const { client, claim } = await db.transaction(async (tx) => {
        const created = await createClient(fields, tx);
        return { client: created, claim: prepared && (await claims.open(created, prepared, tx)) };
      });
      const claimFields = claim && { ...claim, claim_uri: urls.claimUri };
      return { status: 201, body: { ...registrationResponse(client, await issueIdentityAssertion(client)), ...claimFields } };
    }
    if (type === 'identity_assertion') {
      const assertionType = (body as { assertion_type?: unknown }).assertion_type;
      if (assertionType === 'verified_email') {
        if (!claims.emailEnabled)
          throw new AgentAuthError('unsupported_assertion_type', 'verified_email needs email, which this service does not send');
        if (!validateVerifiedEmail(body)) throw new ValidationError(toFieldErrors(validateVerifiedEmail.errors ?? []));
        const { email } = body;
        // No credential until the person proves the address with the code mailed to it.
        const fields = {
          clientName: body.client_name.trim(),
          clientUri: null,
          registrationType: 'verified_email',
          status: 'pending',
          email,
        } as const;
        // Over the limits on codes (limits.ts) claims.open refuses with 429 and nothing is kept (no
        // mail, no registration): the agent retries after Retry-After. The code is hashed before
        // the transaction, which holds the address's lock meanwhile.
        const prepared = await claims.prepare(email);
        const { client, claim } = await db.transaction(
          async (tx) => {
            const created = await createClient(fields, tx);
            return { client: created, claim: await claims.open(created, prepared, tx) };
          },
          { lock: codeLocks(email) },
        );
        return { status: 202, body: { client_id: client.clientId, status: 'pending', ...claim, claim_uri: urls.claimUri } };
      }
      if (assertionType !== TOKEN_TYPE_ID_JAG) {
        throw new AgentAuthError('unsupported_assertion_type', `assertion_type must be "verified_email" or "${TOKEN_TYPE_ID_JAG}"`);
      }
      if (!validateIdJag(body)) throw new ValidationError(toFieldErrors(validateIdJag.errors ?? []));
      const verified = await verifyIdJag(body.assertion);
      const client = await clientForIdJag(verified, body.client_name?.trim());
      return { status: 201, body: registrationResponse(client, await issueIdentityAssertion(client)) };
    }
    throw new AgentAuthError('unsupported_identity_type', 'type must be "anonymous" or "identity_assertion"');
  }

  async function verifyIdJag(assertion: string): Promise<VerifiedIdJag> {
    try {
      return await idJag.verify(assertion);
    } catch (error) {
      if (error instanceof AssertionError) throw new AgentAuthError(error.code, error.message);
      throw error;
    }
  }

  /** POST /agent/claim: start (`email`) or complete (`otp`) a claim. */
  async function claim(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    if (!validateClaim(body)) throw new ValidationError(toFieldErrors(validateClaim.errors ?? []));
    // Exactly one of the two steps: start with an email, or complete with the code.
    if ((body.email === undefined) === (body.otp === undefined)) {
      throw new AgentAuthError('invalid_request', 'send either email (to start the claim) or otp (to complete it), with claim_token');
    }
    if (body.email !== undefined) return { status: 202, body: await claims.start(body.claim_token, body.email) };
    const { clientId, email } = await claims.complete(body.claim_token, body.otp as string);
    const identity = await issueIdentityAssertion({ clientId, email });
    return {
      status: 200,
      body: {
        client_id: clientId,
        status: 'claimed',
        email,
        identity_assertion: identity.assertion,
        identity_assertion_expires: identity.expires.toISOString(),
        scopes: [...SCOPES_SUPPORTED],
      },
    };
  }

  /** The same person at the same issuer keeps one client on file, however often they register. */
  async function clientForIdJag(verified: VerifiedIdJag, clientName?: string): Promise<AgentClient> {
    // Registrations of one person may race (parallel requests, several instances): each finds none,
    // and the unique index on active clients' (issuer, subject) lets one insert win (migration 006).
    // The others take the winner's client. A second round covers a winner revoked in between.
    for (let round = 0; round < ID_JAG_CLIENT_ROUNDS; round++) {
      const existing = await store.findClientBySubject(verified.issuer, verified.subject);
      if (existing) return existing;
      const client = newClient({
        clientName: clientName ?? verified.clientId ?? verified.subject,
        clientUri: null,
        registrationType: 'id-jag',
        email: verified.email,
        subject: verified.subject,
        issuer: verified.issuer,
      });
      if (await store.createClient(client)) return client;
    }
    throw new Error(`no client could be kept for an ID-JAG subject after ${ID_JAG_CLIENT_ROUNDS} rounds`);
  }

  async function createClient(fields: ClientFields, tx?: Tx): Promise<AgentClient> {
    const client = newClient(fields);
    // Only an ID-JAG client has an issuer and subject, the sole reason an insert is refused.
    if (!(await store.createClient(client, tx))) throw new Error('a client without an ID-JAG subject was refused');
    return client;
  }

  function newClient(fields: ClientFields): AgentClient {
    return {
      clientId: `agt_${randomBytes(12).toString('base64url')}`,
      status: 'active',
      email: null,
      subject: null,
      issuer: null,
      createdAt: now(),
      ...fields,
    };
  }

  /** POST /oauth/token: RFC 7523 jwt-bearer and RFC 8693 token-exchange. */
  async function token(params: Record<string, string | undefined>) {
    const grantType = params.grant_type;
    let assertion: string | undefined;
    let assertionType: string = TOKEN_TYPE_JWT;
    if (grantType === GRANT_TYPE_JWT_BEARER) {
      assertion = params.assertion;
      if (!assertion) throw new OAuthError('invalid_request', 'assertion is required for the jwt-bearer grant');
    } else if (grantType === GRANT_TYPE_TOKEN_EXCHANGE) {
      assertion = params.subject_token;
      assertionType = params.subject_token_type ?? '';
      if (!assertion) throw new OAuthError('invalid_request', 'subject_token is required for token exchange');
      if (assertionType !== TOKEN_TYPE_JWT && assertionType !== TOKEN_TYPE_ID_JAG) {
        throw new OAuthError('invalid_request', `subject_token_type must be ${TOKEN_TYPE_JWT} or ${TOKEN_TYPE_ID_JAG}`);
      }
      if (params.requested_token_type !== undefined && params.requested_token_type !== TOKEN_TYPE_ACCESS_TOKEN) {
        throw new OAuthError('invalid_request', `requested_token_type must be ${TOKEN_TYPE_ACCESS_TOKEN}`);
      }
    } else if (!grantType) {
      throw new OAuthError('invalid_request', 'grant_type is required');
    } else {
      throw new OAuthError('unsupported_grant_type', `grant_type must be ${GRANT_TYPE_JWT_BEARER} or ${GRANT_TYPE_TOKEN_EXCHANGE}`);
    }
    const scope = checkScope(params.scope);
    const audience = checkResource(params.resource);
    const clientId = await redeem(assertion, assertionType);

    const accessToken = await keys.sign(
      { iss: urls.issuer, aud: audience, sub: clientId, client_id: clientId, scope, jti: randomUUID() },
      { typ: ACCESS_TOKEN_TYP, expiresInSeconds: ACCESS_TOKEN_TTL_SECONDS, now: now() },
    );
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope,
      // RFC 8693 §2.2.1: a token-exchange response says what it issued.
      ...(grantType === GRANT_TYPE_TOKEN_EXCHANGE && { issued_token_type: TOKEN_TYPE_ACCESS_TOKEN }),
    };
  }

  function checkScope(requested: string | undefined): string {
    if (requested === undefined || requested.trim() === '') return INQUIRY_WRITE_SCOPE;
    const scopes = requested.trim().split(/\s+/);
    if (scopes.some((scope) => !(SCOPES_SUPPORTED as readonly string[]).includes(scope))) {
      throw new OAuthError('invalid_scope', `the only scope is ${INQUIRY_WRITE_SCOPE}`);
    }
    return [...new Set(scopes)].join(' ');
  }

  function checkResource(resource: string | undefined): string {
    if (resource === undefined) return urls.resource;
    const named = resourceNamed(urls, resource);
    if (named === null) throw new OAuthError('invalid_target', `resource must be ${resourcesListed(urls)}`);
    return named;
  }

  /** The client an assertion stands for: one this service issued, or a trusted ID-JAG. */
  async function redeem(assertion: string, type: string): Promise<string> {
    // A token that names another issuer is taken for an ID-JAG; one that names none (not a JWT at
    // all) is checked as this service's own, whose refusal says what it had to be.
    const issuer = peekIssuer(assertion);
    if (type === TOKEN_TYPE_ID_JAG || (issuer !== undefined && issuer !== urls.issuer)) {
      let verified: VerifiedIdJag;
      try {
        verified = await idJag.verify(assertion);
      } catch (error) {
        // Only the verifier's own verdicts are shown; anything else (a store failure) is a 500.
        if (error instanceof AssertionError) throw new OAuthError('invalid_grant', error.message);
        throw error;
      }
      return (await clientForIdJag(verified)).clientId;
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await keys.verify(assertion, { typ: IDENTITY_ASSERTION_TYP, issuer: urls.issuer, audience: urls.issuer }));
    } catch {
      throw new OAuthError('invalid_grant', 'the assertion is not a valid, unexpired identity assertion of this service');
    }
    const client = typeof payload.sub === 'string' ? await store.findClient(payload.sub) : undefined;
    if (client?.status !== 'active' || (payload.jti && (await store.isTokenRevoked(payload.jti)))) {
      throw new OAuthError('invalid_grant', 'the registration behind this assertion has been revoked');
    }
    return client.clientId;
  }

  /** POST /oauth/revoke (RFC 7009): unknown, invalid and already revoked tokens are fine too. */
  async function revoke(token: string | undefined): Promise<void> {
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    for (const typ of [ACCESS_TOKEN_TYP, IDENTITY_ASSERTION_TYP]) {
      let payload: JWTPayload;
      try {
        // Any audience of ours. (An expired token needs no revoking: it is refused anyway.)
        ({ payload } = await keys.verify(token, {
          typ,
          issuer: urls.issuer,
          audience: [urls.issuer, urls.resource, urls.mcpResource, urls.mcpVerifiedResource],
        }));
      } catch {
        continue;
      }
      if (payload.jti && payload.exp) await store.revokeToken(payload.jti, new Date(payload.exp * 1000), now());
      // Revoking an identity assertion ends the registration and so every token minted from it.
      if (typ === IDENTITY_ASSERTION_TYP && typeof payload.sub === 'string') await store.revokeClient(payload.sub, now());
      return;
    }
    // RFC 7009 §2.2: respond as success, so that a caller learns nothing about tokens it guesses.
  }

  /** Bearer use (docs/agent-auth.md): the client a valid access token stands for, or null. */
  async function authenticate(token: string, audience: string): Promise<AuthenticatedClient | null> {
    let payload: JWTPayload;
    try {
      ({ payload } = await keys.verify(token, { typ: ACCESS_TOKEN_TYP, issuer: urls.issuer, audience }));
    } catch {
      return null;
    }
    const scope = typeof payload.scope === 'string' ? payload.scope : '';
    // `sub` is the agent client (an OAuth sign-in's grant; for the other grants also the client_id).
    if (!scope.split(' ').includes(INQUIRY_WRITE_SCOPE) || typeof payload.sub !== 'string' || !payload.jti) return null;
    if (await store.isTokenRevoked(payload.jti)) return null;
    const client = await store.findClient(payload.sub);
    if (client?.status !== 'active') return null;
    return { clientId: client.clientId, scope, claimed: personVerified(client), email: client.email };
  }

  /** For a resource that requires sign-in: the person a valid access token stands for (a verified email), or null. */
  async function authenticatePerson(token: string, audience: string): Promise<VerifiedPerson | null> {
    const client = await authenticate(token, audience);
    return client?.email ? { clientId: client.clientId, email: client.email, scope: client.scope } : null;
  }

  return { register, claim, token, revoke, authenticate, authenticatePerson };
}

function peekIssuer(token: string): string | undefined {
  try {
    const { iss } = decodeJwt(token);
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

// GET /oauth/authorize and the consent it shows (RFC 6749 §4.1 with PKCE, RFC 7636; RFC 8707
// resource; RFC 9207 iss): the request checked, then a person proves an email address with a mailed
// code and approves, or denies. Approval makes the grant: an agent client holding that address.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AgentClient, Authorization, Store } from '../storage/ports.js';
import { ajv } from '../validation/ajv.js';
import { hashOtp, OTP_DIGITS, OTP_MAX_FAILED_ATTEMPTS, OTP_TTL_MS } from './claims.js';
import { codeLocks } from './code-limits.js';
import type { CodeMailer } from './code-mailer.js';
import { AgentAuthError } from './errors.js';
import { INQUIRY_WRITE_SCOPE, SCOPES_SUPPORTED } from './metadata.js';
import type { KnownClient, OAuthClients } from './oauth-clients.js';
import { redirectUriMatches } from './redirect-uri.js';
import { resourceNamed } from './resources.js';
import type { AuthUrls } from './urls.js';

/** How long the consent page may be left open before its sign-in must start again. */
export const CONSENT_TTL_MS = 15 * 60 * 1000;
/** RFC 6749 §4.1.2: short-lived, and single-use. */
export const AUTHORIZATION_CODE_TTL_MS = 2 * 60 * 1000;
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE_LENGTH = 1000;

const validateEmail = ajv.compile<string>({ type: 'string', format: 'email', maxLength: 254 });
export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** What the consent page shows, at the step the sign-in is at. */
export interface ConsentView {
  readonly id: string;
  readonly clientName: string;
  /** Where the person is sent back: the redirect URI's origin, and the URI itself. */
  readonly redirectOrigin: string;
  readonly redirectUri: string;
  readonly step: 'email' | 'code';
  readonly email?: string;
  readonly error?: string;
}

export type AuthorizeOutcome =
  | { readonly kind: 'consent'; readonly view: ConsentView }
  | { readonly kind: 'redirect'; readonly location: string }
  /** No redirect URI to trust (RFC 6749 §4.1.2.1): the person is told, the client learns nothing. */
  | { readonly kind: 'refused'; readonly message: string };

export interface AuthorizationDeps {
  readonly store: Pick<Store, 'auth' | 'oauth' | 'outbox' | 'transaction' | 'afterCommit'>;
  readonly clients: OAuthClients;
  readonly mailer: CodeMailer;
  readonly urls: AuthUrls;
  readonly studioName: string;
  readonly now: () => Date;
}

export type Authorizations = ReturnType<typeof createAuthorizations>;

export function createAuthorizations({ store, clients, mailer, urls, studioName, now }: AuthorizationDeps) {
  /** The client's redirect URI with the response parameters, `iss` always (RFC 9207 §2). */
  function redirect(uri: string, params: Record<string, string | null | undefined>): AuthorizeOutcome {
    const url = new URL(uri);
    for (const [name, value] of Object.entries({ ...params, iss: urls.issuer })) if (value != null) url.searchParams.append(name, value);
    return { kind: 'redirect', location: url.href };
  }

  /** GET /oauth/authorize: the request checked; `browser` is the secret of the person's browser (a cookie). */
  async function begin(query: Record<string, unknown>, browser: string): Promise<AuthorizeOutcome> {
    const repeated = Object.entries(query).find(([, value]) => typeof value !== 'string');
    const param = (name: string) => query[name] as string | undefined;
    const clientId = param('client_id');
    if (!clientId) return { kind: 'refused', message: 'The sign-in link has no client_id.' };
    if (repeated?.[0] === 'client_id' || repeated?.[0] === 'redirect_uri') {
      return { kind: 'refused', message: `The sign-in link gives ${repeated[0]} more than once.` };
    }
    const client = await clients.resolve(clientId);
    if (typeof client === 'string') return { kind: 'refused', message: client };
    const redirectUri = param('redirect_uri') ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (redirectUri === undefined || !redirectUriMatches(client.redirectUris, redirectUri)) {
      return { kind: 'refused', message: 'The sign-in link sends you back to an address this application did not register.' };
    }
    const state = typeof query.state === 'string' ? query.state : undefined;
    const fail = (error: string, description: string) =>
      redirect(redirectUri, { error, error_description: description, state: state?.slice(0, MAX_STATE_LENGTH) });
    if (repeated) return fail('invalid_request', `${repeated[0]} was sent more than once`);
    if (state !== undefined && state.length > MAX_STATE_LENGTH) return fail('invalid_request', 'state is too long');
    if (param('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const challenge = param('code_challenge');
    if (challenge === undefined) return fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636)');
    if (param('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!PKCE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
    const requestedResource = param('resource');
    const resource = requestedResource === undefined ? urls.resource : resourceNamed(urls, requestedResource);
    if (resource === null) return fail('invalid_target', 'resource names nothing this service serves');
    const scope = param('scope')?.trim() || INQUIRY_WRITE_SCOPE;
    if (scope.split(/\s+/).some((one) => !(SCOPES_SUPPORTED as readonly string[]).includes(one))) {
      return fail('invalid_scope', `the only scope is ${INQUIRY_WRITE_SCOPE}`);
    }
    const created = now();
    const authorization: Authorization = {
      id: randomBytes(24).toString('base64url'),
      clientId: client.clientId,
      redirectUri,
      codeChallenge: challenge,
      resource,
      scope: INQUIRY_WRITE_SCOPE,
      state: state ?? null,
      csrfHash: sha256(browser),
      status: 'pending',
      email: null,
      otpHash: null,
      otpExpiresAt: null,
      failedAttempts: 0,
      codeHash: null,
      grantId: null,
      expiresAt: new Date(created.getTime() + CONSENT_TTL_MS),
      createdAt: created,
    };
    await store.oauth.createAuthorization(authorization);
    return { kind: 'consent', view: viewOf(authorization, client.clientName, 'email') };
  }

  function viewOf(a: Authorization, clientName: string, step: ConsentView['step'], extra: Partial<ConsentView> = {}): ConsentView {
    return { id: a.id, clientName, redirectOrigin: new URL(a.redirectUri).origin, redirectUri: a.redirectUri, step, ...extra };
  }

  /** The sign-in a consent form names, if this browser started it and it is still waiting. */
  async function waiting(id: string, browser: string): Promise<{ a: Authorization; client: KnownClient } | string> {
    const a = id.length <= 64 ? await store.oauth.findAuthorization(id) : undefined;
    if (!a) return 'This sign-in is unknown. Go back to the application and start again.';
    const given = Buffer.from(sha256(browser), 'hex');
    if (!timingSafeEqual(given, Buffer.from(a.csrfHash.padEnd(64, '0').slice(0, 64), 'hex'))) {
      return 'This sign-in was started in another browser. Go back to the application and start again.';
    }
    if (a.status !== 'pending' && a.status !== 'code_sent')
      return 'This sign-in has already ended. Go back to the application and start again.';
    if (a.expiresAt.getTime() <= now().getTime()) return 'This sign-in has expired. Go back to the application and start again.';
    const client = await clients.resolve(a.clientId);
    if (typeof client === 'string') return client;
    return { a, client };
  }

  /** The consent form's first step: a code mailed to `email` (again, or to another address). */
  async function sendCode(id: string, browser: string, email: unknown): Promise<AuthorizeOutcome> {
    const found = await waiting(id, browser);
    if (typeof found === 'string') return { kind: 'refused', message: found };
    const { a, client } = found;
    if (typeof email !== 'string' || !validateEmail(email.trim())) {
      return { kind: 'consent', view: viewOf(a, client.clientName, 'email', { error: 'Enter a valid email address.' }) };
    }
    const address = email.trim();
    const scopeHash = sha256(`oauth:${a.id}`);
    const { placeholder, code } = mailer.newCode(OTP_DIGITS);
    const otpHash = await hashOtp(code, scopeHash);
    try {
      const sent = await store.transaction(
        async (tx) => {
          const changes = { status: 'code_sent', email: address, otpHash, otpExpiresAt: new Date(now().getTime() + OTP_TTL_MS) } as const;
          if (!(await store.oauth.updateAuthorization(a.id, changes, ['pending', 'code_sent'], tx))) return false;
          await mailer.send(
            { to: address, scopeHash, subject: `Your ${studioName} sign-in code`, text: mailText(client.clientName) },
            placeholder,
            tx,
          );
          return true;
        },
        { lock: codeLocks(address, scopeHash) },
      );
      if (!sent) return { kind: 'refused', message: 'This sign-in has already ended. Go back to the application and start again.' };
    } catch (error) {
      if (!(error instanceof AgentAuthError)) throw error;
      return {
        kind: 'consent',
        view: viewOf(a, client.clientName, 'email', { email: address, error: `No code was sent: ${error.message}.` }),
      };
    }
    return { kind: 'consent', view: viewOf(a, client.clientName, 'code', { email: address }) };
  }

  function mailText(clientName: string) {
    const minutes = OTP_TTL_MS / 60_000;
    return (code: string) =>
      `Your ${studioName} sign-in code is ${code}.\n\n` +
      `Type it on the page that asks whether "${clientName}" may send inquiries to ${studioName} in your name. It expires in ${minutes} minutes.\n` +
      'If you did not ask for it, ignore this mail: nothing happens without the code.\n';
  }

  /** The consent form's answer: deny (access_denied), approve with the mailed code, or restart with another address. */
  async function decide(id: string, browser: string, decision: unknown, otp: unknown): Promise<AuthorizeOutcome> {
    const found = await waiting(id, browser);
    if (typeof found === 'string') return { kind: 'refused', message: found };
    const { a, client } = found;
    const back = (params: Record<string, string>) => redirect(a.redirectUri, { ...params, state: a.state });
    if (decision === 'deny') {
      await store.oauth.updateAuthorization(a.id, { status: 'denied', email: null, otpHash: null }, ['pending', 'code_sent']);
      return back({ error: 'access_denied', error_description: 'the person declined the sign-in' });
    }
    if (decision === 'restart') return { kind: 'consent', view: viewOf(a, client.clientName, 'email', { email: a.email ?? '' }) };
    const again = (error: string) =>
      ({ kind: 'consent', view: viewOf(a, client.clientName, 'code', { email: a.email ?? '', error }) }) as const;
    if (decision !== 'approve' || a.status !== 'code_sent' || a.otpHash === null) {
      return {
        kind: 'consent',
        view: viewOf(a, client.clientName, 'email', { error: 'Enter your email address first: a code is mailed to it.' }),
      };
    }
    if (typeof otp !== 'string' || !/^[0-9]{6}$/.test(otp.trim())) return again('Enter the 6-digit code from the mail.');
    if (a.otpExpiresAt === null || a.otpExpiresAt.getTime() <= now().getTime()) return again('The code has expired: send a new one.');
    const given = Buffer.from(await hashOtp(otp.trim(), sha256(`oauth:${a.id}`)), 'hex');
    const code = randomBytes(32).toString('base64url');
    const outcome = await store.transaction(async (tx) => {
      // Counted first, holding the row: parallel guesses share the tries, and one right code approves once.
      const attempts = await store.oauth.countAuthorizationAttempt(a.id, OTP_MAX_FAILED_ATTEMPTS, tx);
      const current = await store.oauth.findAuthorization(a.id, tx);
      if (attempts === null || current?.otpHash == null || current.email === null) return 'ended' as const;
      if (!timingSafeEqual(given, Buffer.from(current.otpHash, 'hex'))) {
        if (attempts < OTP_MAX_FAILED_ATTEMPTS) return 'wrong' as const;
        await store.oauth.updateAuthorization(a.id, { status: 'ended', email: null, otpHash: null }, ['code_sent'], tx);
        return 'ended' as const;
      }
      const grant = newGrant(client, current.email);
      await store.auth.createClient(grant, tx);
      const approved = { status: 'approved', codeHash: sha256(code), grantId: grant.clientId, email: null, otpHash: null } as const;
      await store.oauth.updateAuthorization(
        a.id,
        { ...approved, expiresAt: new Date(now().getTime() + AUTHORIZATION_CODE_TTL_MS) },
        ['code_sent'],
        tx,
      );
      if (client.registered) await store.oauth.markClientUsed(client.clientId, now(), tx);
      return 'approved' as const;
    });
    if (outcome === 'wrong') return again('Wrong code. Check the latest mail and try again.');
    if (outcome === 'ended') return back({ error: 'access_denied', error_description: 'too many wrong codes: the sign-in has ended' });
    return back({ code });
  }

  function newGrant(client: KnownClient, email: string): AgentClient {
    return {
      clientId: `agt_${randomBytes(12).toString('base64url')}`,
      clientName: client.clientName,
      clientUri: client.registered ? null : client.clientId,
      registrationType: 'oauth',
      status: 'active',
      email,
      subject: null,
      issuer: null,
      createdAt: now(),
    };
  }

  return { begin, sendCode, decide, emailEnabled: mailer.enabled };
}

// Agent auth end to end over HTTP on a real socket: register → token → attributed inquiry (the mail
// arrives at a real SMTP server) → revoke → no longer attributed, across a restart too. Tokens are
// verified with jose against the published JWKS; an ID-JAG issuer with its own keys runs locally.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashClaimToken } from '../../src/auth/claims.js';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

// While `gate` is set, scrypt (the codes' hash) waits for it: a test holds the hashing as long as it needs.
const hashing = vi.hoisted(() => ({ gate: null as Promise<void> | null, started: () => {} }));
vi.mock('node:crypto', async (original) => {
  const crypto = await original<typeof import('node:crypto')>();
  const scrypt = crypto.scrypt as (...args: unknown[]) => void;
  const held = (...args: unknown[]) => {
    hashing.started();
    void (hashing.gate ?? Promise.resolve()).then(() => scrypt(...args));
  };
  return { ...crypto, scrypt: held };
});

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

let testApp: TestApp;
let smtp: TestSmtpServer;
let idp: IdJagIssuer;
let base: string;
let env: Record<string, string>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  idp = await startIdJagIssuer();
  // PUBLIC_URL must be the address clients use (CORS, issuer, resource): reserve it first.
  const reserved = await reserveBaseUrl();
  const port = reserved.port;
  base = reserved.base;
  env = {
    PUBLIC_URL: base,
    SMTP_URL: smtp.url,
    INQUIRY_TO: 'studio@example.com',
    TRUSTED_ISSUERS: JSON.stringify({ [idp.issuer]: idp.jwksUrl }),
  };
  testApp = await startTestApp({ env, listen: true, port });
});
afterAll(async () => {
  await testApp?.close();
  await smtp.stop();
  await idp.close();
});

const postJson = (origin: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const json = (path: string, body: unknown, headers: Record<string, string> = {}) => postJson(base, path, body, headers);
const verifiedEmailRegistration = (email: string, clientName: string) => ({
  type: 'identity_assertion',
  assertion_type: 'verified_email',
  email,
  client_name: clientName,
});
const form = (path: string, params: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });

async function registerAnonymous(): Promise<{ client_id: string; identity_assertion: string }> {
  const response = await json('/agent/register', { type: 'anonymous', client_name: 'Test agent', client_uri: 'https://agent.example' });
  expect(response.status).toBe(201);
  return response.json() as Promise<{ client_id: string; identity_assertion: string }>;
}

async function tokenFor(assertion: string): Promise<string> {
  const response = await form('/oauth/token', { grant_type: JWT_BEARER, assertion });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function submitWith(token: string, message: string) {
  const response = await json('/api/contact', validInquiry({ message }), { authorization: `Bearer ${token}` });
  expect(response.status).toBe(200);
  const stored = await testApp.services.store.inquiries.findByReference(referenceOf(await response.text()));
  return { clientId: stored?.clientId ?? null, wwwAuthenticate: response.headers.get('www-authenticate') };
}

/** The code in the newest mail to `to`. */
async function codeSentTo(to: string, after = 0): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mails = smtp.received.slice(after).filter((mail) => mail.envelope.to.includes(to));
    const code = /\b(\d{6})\b/.exec(mails.at(-1)?.parsed.text ?? '')?.[1];
    if (code) return code;
    if (Date.now() > deadline) throw new Error(`no code mailed to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('anonymous registration → token → attributed inquiry → revoke', () => {
  it('walks the whole flow', async () => {
    const registration = await registerAnonymous();
    expect(registration).toMatchObject({
      client_id: expect.stringMatching(/^agt_/),
      client_name: 'Test agent',
      client_uri: 'https://agent.example',
      registration_type: 'anonymous',
      scopes: ['inquiry:write'],
      identity_assertion_expires: expect.any(String),
    });
    const jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
    const assertion = await jwtVerify(registration.identity_assertion, jwks, { issuer: base, audience: base });
    expect(assertion.payload.sub).toBe(registration.client_id);

    const tokenResponse = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: registration.identity_assertion });
    expect(tokenResponse.status).toBe(200);
    expect(tokenResponse.headers.get('cache-control')).toBe('no-store');
    const token = (await tokenResponse.json()) as { access_token: string; token_type: string; expires_in: number; scope: string };
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'inquiry:write' });
    const access = await jwtVerify(token.access_token, jwks, { issuer: base, audience: `${base}/`, typ: 'at+jwt' });
    expect(access.payload).toMatchObject({ sub: registration.client_id, client_id: registration.client_id, scope: 'inquiry:write' });
    expect(access.payload.jti).toEqual(expect.any(String));
    expect(decodeProtectedHeader(token.access_token)).toMatchObject({ alg: 'ES256', kid: expect.any(String) });

    const attributed = await submitWith(token.access_token, 'attributed inquiry');
    expect(attributed).toEqual({ clientId: registration.client_id, wwwAuthenticate: null });
    const mail = (await smtp.waitFor(1)).find((m) => m.parsed.text?.includes('attributed inquiry'));
    // An anonymous registration nobody has claimed: named, its person not verified.
    expect(mail?.parsed.text).toContain('Came through: the HTTP API, sent by the agent “Test agent”, its person not verified');

    // Revoke the access token: the next inquiry is still accepted, as anonymous, and told why.
    expect((await form('/oauth/revoke', { token: token.access_token })).status).toBe(200);
    const afterRevoke = await submitWith(token.access_token, 'after revoking the token');
    expect(afterRevoke.clientId).toBeNull();
    expect(afterRevoke.wwwAuthenticate).toBe(
      `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource"`,
    );

    // A new token from the same assertion works; revoking the assertion ends the registration.
    const second = await tokenFor(registration.identity_assertion);
    expect((await submitWith(second, 'second token')).clientId).toBe(registration.client_id);
    expect(
      (await json('/oauth/revoke', { token: registration.identity_assertion, token_type_hint: 'urn:ietf:params:oauth:token-type:jwt' }))
        .status,
    ).toBe(200);
    expect((await submitWith(second, 'after revoking the registration')).clientId).toBeNull();
    const refused = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: registration.identity_assertion });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });

    // Another registration's token, revoked by itself (its registration stays active).
    const other = await registerAnonymous();
    const otherToken = await tokenFor(other.identity_assertion);
    expect((await form('/oauth/revoke', { token: otherToken })).status).toBe(200);

    // Revocation lives in the database: a restarted service still refuses all three, and the
    // maintenance (run at start and hourly) keeps the revocations of tokens that have not expired
    // and the registration revoked now.
    const restarted = await startTestApp({ dir: testApp.dir, env, startWorker: false });
    await restarted.services.maintenance.run();
    expect(await restarted.services.auth.authenticate(otherToken, `${base}/`)).toBeNull();
    expect(await restarted.services.auth.authenticate(second, `${base}/`)).toBeNull();
    await expect(
      restarted.services.auth.token({ grant_type: JWT_BEARER, assertion: registration.identity_assertion }),
    ).rejects.toMatchObject({
      code: 'invalid_grant',
    });
    await restarted.close();
  });

  it('exchanges the assertion with RFC 8693 token exchange, as JSON, for the MCP resource', async () => {
    const registration = await registerAnonymous();
    const response = await json('/oauth/token', {
      grant_type: TOKEN_EXCHANGE,
      subject_token: registration.identity_assertion,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      resource: `${base}/mcp`,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string; issued_token_type: string };
    expect(body.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    const { payload } = await jwtVerify(body.access_token, createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`)), {
      audience: `${base}/mcp`,
    });
    expect(payload.client_id).toBe(registration.client_id);
    // A token for the MCP resource does not attribute inquiries on the HTTP resource.
    expect((await submitWith(body.access_token, 'wrong audience')).clientId).toBeNull();
  });
});

describe('ID-JAG from a trusted issuer', () => {
  it('registers, and redeems at the token endpoint for the same client', async () => {
    const response = await json('/agent/register', {
      type: 'identity_assertion',
      assertion_type: 'urn:ietf:params:oauth:token-type:id-jag',
      assertion: await idp.sign(base, { email: 'agent-owner@example.com' }),
      client_name: 'IdP agent',
    });
    expect(response.status).toBe(201);
    const registration = (await response.json()) as { client_id: string; registration_type: string; email: string };
    expect(registration).toMatchObject({ registration_type: 'id-jag', email: 'agent-owner@example.com' });

    const token = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: await idp.sign(base) });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    expect((await submitWith(access_token, 'from an id-jag agent')).clientId).toBe(registration.client_id);
    expect((await form('/oauth/revoke', { token: access_token, token_type_hint: 'access_token' })).status).toBe(200);
    expect((await submitWith(access_token, 'after revoking the id-jag token')).clientId).toBeNull();
  });

  it('keeps an email claim only when it is an address by the verified_email rule, and registers either way', async () => {
    // Not an address, a header injection, padded, and an address of 255 characters (the rule's limit is 254).
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;
    const invalid = ['not-an-email', 'a\r\nBcc: x@evil.example', ' padded@example.com', longest];
    for (const [index, email] of invalid.entries()) {
      const sub = `invalid-email-${index}-${crypto.randomUUID()}`;
      const response = await json('/agent/register', {
        type: 'identity_assertion',
        assertion_type: 'urn:ietf:params:oauth:token-type:id-jag',
        assertion: await idp.sign(base, { sub, email }),
      });
      expect(response.status, JSON.stringify(email)).toBe(201);
      const registration = (await response.json()) as { client_id: string; registration_type: string; identity_assertion: string };
      expect(registration.registration_type).toBe('id-jag');
      expect(registration, JSON.stringify(email)).not.toHaveProperty('email');
      expect(decodeJwt(registration.identity_assertion), 'the identity assertion signed for it').not.toHaveProperty('email');
      expect((await testApp.services.store.auth.findClient(registration.client_id))?.email, 'on file').toBeNull();
      // The same person at the token endpoint: the same client, still without the email.
      const token = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: await idp.sign(base, { sub, email }) });
      expect(token.status).toBe(200);
      const { access_token } = (await token.json()) as { access_token: string };
      expect((await submitWith(access_token, `id-jag with invalid email ${index}`)).clientId).toBe(registration.client_id);
    }
    // An address of 254 characters is kept as sent, where the identity assertion carries it too.
    const kept = longest.slice(1);
    const response = await json('/agent/register', {
      type: 'identity_assertion',
      assertion_type: 'urn:ietf:params:oauth:token-type:id-jag',
      assertion: await idp.sign(base, { sub: `valid-email-${crypto.randomUUID()}`, email: kept }),
    });
    expect(response.status).toBe(201);
    const registration = (await response.json()) as { email: string; identity_assertion: string };
    expect(registration.email).toBe(kept);
    expect(decodeJwt(registration.identity_assertion).email).toBe(kept);
  });

  it('redeems an ID-JAG with RFC 8693 token exchange', async () => {
    const response = await json('/oauth/token', {
      grant_type: TOKEN_EXCHANGE,
      subject_token: await idp.sign(base, { sub: 'exchange-user' }),
      subject_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
    });
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    expect((await submitWith(access_token, 'exchanged id-jag')).clientId).toMatch(/^agt_/);
  });

  it.each([
    ['a replayed assertion', 'replay_detected'],
    ['a wrong audience', 'invalid_assertion'],
  ])('answers %s with %s', async (kind, error) => {
    const assertion = kind === 'a wrong audience' ? await idp.sign('https://elsewhere.example') : await idp.sign(base);
    const body = { type: 'identity_assertion', assertion_type: 'urn:ietf:params:oauth:token-type:id-jag', assertion };
    if (kind === 'a replayed assertion') expect((await json('/agent/register', body)).status).toBe(201);
    const response = await json('/agent/register', body);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 400, error });
  });
});

describe('errors', () => {
  it.each([
    [{ type: 'magic' }, 'unsupported_identity_type'],
    [{ type: 'identity_assertion', assertion_type: 'saml' }, 'unsupported_assertion_type'],
    [{ type: 'anonymous' }, 'invalid_request'],
    [{ type: 'anonymous', client_name: 'x', client_uri: 'javascript:alert(1)' }, 'invalid_request'],
    [{ type: 'anonymous', client_name: 'x', extra: true }, 'invalid_request'],
  ])('register %o → 400 %s', async (body, error) => {
    const response = await json('/agent/register', body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error });
  });

  it('takes a form-encoded token request in absolute-form (RFC 9112 §3.2.2), and refuses one it cannot read as sent', async () => {
    const { identity_assertion } = await registerAnonymous();
    const body = new URLSearchParams({ grant_type: JWT_BEARER, assertion: identity_assertion }).toString();
    const { hostname, port } = new URL(base);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write(
          `POST ${base}/oauth/token HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
            `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString();
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"access_token"');

    const gzipped = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      body,
    });
    expect(gzipped.status).toBe(400); // RFC 6749 §5.2: a request in a form the server does not take is invalid_request
    expect(await gzipped.json()).toMatchObject({ error: 'invalid_request' });
    const notUtf8 = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.concat([Buffer.from(`${body}&x=`), Buffer.from([0xff])]),
    });
    expect(notUtf8.status).toBe(400);
    expect(await notUtf8.json()).toMatchObject({ error: 'invalid_request', error_description: 'The request body is not valid UTF-8.' });
  });

  it.each(['/agent/register', '/agent/claim'])('refuses a form-encoded body at %s with 415: it takes JSON', async (path) => {
    const response = await form(path, { type: 'anonymous', client_name: 'Form agent' });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ status: 415, error: 'unsupported_media_type' });
  });

  it.each([
    [{ grant_type: 'password', username: 'a' }, 'unsupported_grant_type'],
    [{}, 'invalid_request'],
    [{ grant_type: JWT_BEARER }, 'invalid_request'],
    [{ grant_type: JWT_BEARER, assertion: 'not.a.jwt' }, 'invalid_grant'],
    [{ grant_type: JWT_BEARER, assertion: '\u0000' }, 'invalid_grant'],
    [{ grant_type: TOKEN_EXCHANGE, subject_token: 'x', subject_token_type: 'urn:x' }, 'invalid_request'],
  ])('token %o → 400 %s, RFC 6749 JSON, no-store', async (params, error) => {
    const response = await form('/oauth/token', params as Record<string, string>);
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({ error, error_description: expect.any(String) });
    // Not a JWT, it names no issuer: it is not taken for an ID-JAG (which are enabled here).
    if ('assertion' in params)
      expect(body.error_description).toBe('the assertion is not a valid, unexpired identity assertion of this service');
  });

  it('refuses a scope or resource that does not exist', async () => {
    const { identity_assertion } = await registerAnonymous();
    const scope = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: identity_assertion, scope: 'admin' });
    expect(await scope.json()).toMatchObject({ error: 'invalid_scope' });
    const resource = await form('/oauth/token', {
      grant_type: JWT_BEARER,
      assertion: identity_assertion,
      resource: 'https://other.example/',
    });
    expect(await resource.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('takes the resource in any spelling of the same URI (MCP "Canonical Server URI"), and no other', async () => {
    const { identity_assertion } = await registerAnonymous();
    const { host } = new URL(base);
    for (const [resource, audience] of [
      [`HTTP://${host}/mcp`, `${base}/mcp`],
      [`Http://${host}/./mcp`, `${base}/mcp`],
      [`HTTP://${host}`, `${base}/`],
    ] as const) {
      const response = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: identity_assertion, resource });
      expect(response.status).toBe(200);
      const { access_token } = (await response.json()) as { access_token: string };
      expect(JSON.parse(Buffer.from(access_token.split('.')[1] ?? '', 'base64url').toString()).aud).toBe(audience);
    }
    for (const resource of [`${base}/mcp#x`, `${base}/mcp?x=1`, `${base}/MCP`]) {
      const response = await form('/oauth/token', { grant_type: JWT_BEARER, assertion: identity_assertion, resource });
      expect(await response.json()).toMatchObject({ error: 'invalid_target' });
    }
  });

  it('refuses a parameter sent twice', async () => {
    const response = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=${encodeURIComponent(JWT_BEARER)}&assertion=a&assertion=b`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers revocation of unknown tokens with 200, and a missing token with 400', async () => {
    expect((await form('/oauth/revoke', { token: 'never-issued' })).status).toBe(200);
    expect((await json('/oauth/revoke', { token: 'a.b.c' })).status).toBe(200);
    const missing = await form('/oauth/revoke', {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('caps bodies at 16 KiB', async () => {
    const response = await json('/agent/register', { type: 'anonymous', client_name: 'x'.repeat(17 * 1024) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'payload_too_large', detail: 'The request body is larger than 16 KiB.' });
  });

  it('never lets a bad bearer token cost an inquiry; other schemes are ignored', async () => {
    const garbage = await submitWith('garbage', 'garbage token');
    expect(garbage.clientId).toBeNull();
    expect(garbage.wwwAuthenticate).toContain('error="invalid_token"');
    const basic = await json('/api/contact', validInquiry({ message: 'basic auth' }), { authorization: 'Basic dXNlcjpwYXNz' });
    expect(basic.status).toBe(200);
    expect(basic.headers.get('www-authenticate')).toBeNull();
  });
});

describe('claims (codes read from the real SMTP server)', () => {
  it('advertises verified_email where mail can be sent', async () => {
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
      agent_auth: { identity_assertion: { assertion_types_supported: string[] } };
    };
    expect(metadata.agent_auth.identity_assertion.assertion_types_supported).toContain('verified_email');
  });

  it('verified_email: 202 pending, the code arrives by mail, the claim completes with a credential', async () => {
    const mark = smtp.received.length;
    const response = await json('/agent/register', verifiedEmailRegistration('owner@example.com', 'Owned agent'));
    expect(response.status).toBe(202);
    const pending = (await response.json()) as Record<string, string>;
    expect(pending).toMatchObject({ status: 'pending', claim_uri: `${base}/agent/claim`, claim_token: expect.stringMatching(/^clm_/) });
    expect(pending.identity_assertion).toBeUndefined();

    const code = await codeSentTo('owner@example.com', mark);
    const mail = smtp.received.slice(mark).find((m) => m.envelope.to.includes('owner@example.com'));
    expect(mail?.parsed.subject).not.toContain(code); // the code is in the body only

    const wrong = await json('/agent/claim', { claim_token: pending.claim_token, otp: code === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'otp_invalid' });

    const claimed = await json('/agent/claim', { claim_token: pending.claim_token, otp: code });
    expect(claimed.status).toBe(200);
    const body = (await claimed.json()) as Record<string, string>;
    expect(body).toMatchObject({ client_id: pending.client_id, status: 'claimed', email: 'owner@example.com' });
    const token = await tokenFor(body.identity_assertion as string);
    expect((await submitWith(token, 'from a claimed agent')).clientId).toBe(pending.client_id);

    // Single use: the same code again, and the claim again, are refused.
    const again = await json('/agent/claim', { claim_token: pending.claim_token, otp: code });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'previously_claimed' });

    // Revoking the claimed registration's assertion ends its tokens.
    expect((await form('/oauth/revoke', { token: body.identity_assertion as string })).status).toBe(200);
    expect((await submitWith(token, 'after revoking the claimed registration')).clientId).toBeNull();

    // A used code is not kept, not even as a hash.
    const rows = await testApp.services.store.auth.findClaim(hashClaimToken(pending.claim_token as string));
    expect(rows?.otpHash).toBeNull();
  });

  it('anonymous registration: start with an email, complete with the mailed code', async () => {
    const registration = (await (await json('/agent/register', { type: 'anonymous', client_name: 'Claimable' })).json()) as Record<
      string,
      string
    >;
    expect(registration.claim_token).toMatch(/^clm_/);
    expect(registration.claim_uri).toBe(`${base}/agent/claim`);
    const mark = smtp.received.length;
    const started = await json('/agent/claim', { claim_token: registration.claim_token, email: 'person@example.com' });
    expect(started.status).toBe(202);
    expect(await started.json()).toEqual({ status: 'initiated' });
    const code = await codeSentTo('person@example.com', mark);
    const done = await json('/agent/claim', { claim_token: registration.claim_token, otp: code });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ client_id: registration.client_id, email: 'person@example.com' });
  });

  it('ends a claim after 5 wrong codes, and refuses unknown claim tokens', async () => {
    const registration = (await (await json('/agent/register', { type: 'anonymous', client_name: 'Guessed' })).json()) as Record<
      string,
      string
    >;
    const mark = smtp.received.length;
    await json('/agent/claim', { claim_token: registration.claim_token, email: 'victim@example.com' });
    const code = await codeSentTo('victim@example.com', mark);
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) {
      const response = await json('/agent/claim', { claim_token: registration.claim_token, otp: wrongCode });
      expect(response.status).toBe(401);
    }
    const ended = await json('/agent/claim', { claim_token: registration.claim_token, otp: code });
    expect(ended.status).toBe(410);
    expect(await ended.json()).toMatchObject({ error: 'claim_expired' });

    // Starting again does not buy more tries.
    expect((await json('/agent/claim', { claim_token: registration.claim_token, email: 'victim@example.com' })).status).toBe(410);

    const unknown = await json('/agent/claim', { claim_token: 'clm_unknown', otp: '123456' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_claim_token' });
    const both = await json('/agent/claim', { claim_token: registration.claim_token, otp: '123456', email: 'a@b.co' });
    expect(both.status).toBe(400);
  });
});

describe('claim codes go out as soon as they are committed', () => {
  it('wake the delivery worker, registering with verified_email and starting a claim alike', async () => {
    // This worker looks for due deliveries on its own only once a minute: a code that waited for that
    // would miss codeSentTo's 15 s deadline.
    const reserved = await reserveBaseUrl();
    const slow = await startTestApp({
      env: { ...env, PUBLIC_URL: reserved.base },
      listen: true,
      port: reserved.port,
      pollIntervalMs: 60_000,
    });
    const post = (path: string, body: unknown) => postJson(reserved.base, path, body);
    try {
      let mark = smtp.received.length;
      const pending = await post('/agent/register', verifiedEmailRegistration('prompt-owner@example.com', 'Prompt agent'));
      expect(pending.status).toBe(202);
      expect(await codeSentTo('prompt-owner@example.com', mark)).toMatch(/^\d{6}$/);

      const registration = (await (await post('/agent/register', { type: 'anonymous', client_name: 'Prompt claim' })).json()) as {
        claim_token: string;
      };
      mark = smtp.received.length;
      expect((await post('/agent/claim', { claim_token: registration.claim_token, email: 'prompt-person@example.com' })).status).toBe(202);
      expect(await codeSentTo('prompt-person@example.com', mark)).toMatch(/^\d{6}$/);
    } finally {
      await slow.close();
    }
  });
});

describe('registrations beside intake', () => {
  it("hash their codes before their transaction: on SQLite an inquiry is not queued behind registrations' hashing", async () => {
    // Each verified_email registration hashes its code with scrypt, held here until the inquiry is
    // answered: hashed inside its transaction, a code would hold SQLite's only connection meanwhile,
    // and the inquiry would wait for the hashing (for good).
    let release = () => {};
    hashing.gate = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => (hashing.started = resolve));
    const registrations = Array.from({ length: 30 }, (_, index) =>
      json('/agent/register', verifiedEmailRegistration(`beside-${index}@example.com`, `Beside ${index}`)).then((r) => r.status),
    );
    try {
      await started;
      const inquiry = json('/api/contact', validInquiry({ email: 'beside-intake@example.com' }));
      const answered = await Promise.race([inquiry, sleep(10_000, null, { ref: false })]);
      expect(answered?.status, 'the inquiry waited for the hashing').toBe(200);
    } finally {
      hashing.gate = null;
      release();
    }
    expect(new Set(await Promise.all(registrations))).toEqual(new Set([202]));
  });
});

describe('claim codes under attack', () => {
  it('share five tries between parallel guesses and across restarts of the claim', async () => {
    const registration = (await (await json('/agent/register', { type: 'anonymous', client_name: 'Target' })).json()) as Record<
      string,
      string
    >;
    const mark = smtp.received.length;
    await json('/agent/claim', { claim_token: registration.claim_token, email: 'target@example.com' });
    const code = await codeSentTo('target@example.com', mark);
    const wrong = code === '999999' ? '888888' : '999999';
    // Three wrong codes, then a restart (a new code), then a burst of parallel guesses.
    for (let i = 0; i < 3; i++) await json('/agent/claim', { claim_token: registration.claim_token, otp: wrong });
    expect((await json('/agent/claim', { claim_token: registration.claim_token, email: 'target@example.com' })).status).toBe(202);
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => json('/agent/claim', { claim_token: registration.claim_token, otp: wrong })),
    );
    const statuses = burst.map((response) => response.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(2);
    expect(statuses.filter((status) => status === 410)).toHaveLength(8);
  });

  it('refuse a code that a restart of the claim has replaced, as a wrong one, and claim with the newer one', async () => {
    const registration = (await (await json('/agent/register', { type: 'anonymous', client_name: 'Restarted' })).json()) as Record<
      string,
      string
    >;
    const claim = (body: Record<string, string>) => json('/agent/claim', { claim_token: registration.claim_token, ...body });
    let mark = smtp.received.length;
    await claim({ email: 'restarted@example.com' });
    const first = await codeSentTo('restarted@example.com', mark);
    mark = smtp.received.length;
    expect((await claim({ email: 'restarted@example.com' })).status).toBe(202);
    const second = await codeSentTo('restarted@example.com', mark);
    // Two random six-digit codes are the same one time in a million; the first then still works.
    if (first === second) return;

    const stale = await claim({ otp: first });
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ error: 'otp_invalid', detail: 'wrong code' });
    const claimed = await claim({ otp: second });
    expect(claimed.status).toBe(200);
    expect(await claimed.json()).toMatchObject({ status: 'claimed' });
  });
});

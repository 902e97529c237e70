// Agent auth end to end over HTTP on a real socket: register → token → attributed inquiry (the mail
// arrives at a real SMTP server) → revoke → no longer attributed, across a restart too. Tokens are
// verified with jose against the published JWKS; an ID-JAG issuer with its own keys runs locally.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

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
  const probe = await startTestApp({ listen: true, startWorker: false });
  const port = Number(new URL(probe.baseUrl).port);
  await probe.close();
  base = `http://127.0.0.1:${port}`;
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

const json = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
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
    expect(mail?.parsed.text).toContain(`Submitted by agent: ${registration.client_id}`);

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

    // Revocation lives in the database: a restarted service still refuses both.
    const restarted = await startTestApp({ dir: testApp.dir, env, startWorker: false });
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

  it.each([
    [{ grant_type: 'password', username: 'a' }, 'unsupported_grant_type'],
    [{}, 'invalid_request'],
    [{ grant_type: JWT_BEARER }, 'invalid_request'],
    [{ grant_type: JWT_BEARER, assertion: 'not.a.jwt' }, 'invalid_grant'],
    [{ grant_type: TOKEN_EXCHANGE, subject_token: 'x', subject_token_type: 'urn:x' }, 'invalid_request'],
  ])('token %o → 400 %s, RFC 6749 JSON, no-store', async (params, error) => {
    const response = await form('/oauth/token', params as Record<string, string>);
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({ error, error_description: expect.any(String) });
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

// /oauth/register, /oauth/authorize and the sign-in grants of /oauth/token in process: what is
// refused, and how (a page for the person where no redirect URI can be trusted, a redirect with the
// error otherwise, RFC 6749 JSON at the token endpoint). The mailed code is read from a real SMTP server.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { codeMailedTo } from '../helpers/sign-in.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const REDIRECT = 'http://127.0.0.1:8976/callback';
let testApp: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  testApp = await startTestApp({ env: { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' } });
});
afterAll(async () => {
  await testApp?.close();
  await smtp?.stop();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function register(redirectUris: unknown = [REDIRECT]): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await testApp.app.inject({
    method: 'POST',
    url: '/oauth/register',
    payload: { client_name: 'Agent', redirect_uris: redirectUris },
  });
  return { status: response.statusCode, body: response.json() };
}

const authorize = (params: Record<string, string>) =>
  testApp.app.inject({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams(params)}` });

function authorizeParams(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's1',
    ...extra,
  };
}

/** A sign-in approved through the form: the authorization code it redirects with. */
async function approvedCode(clientId: string, challenge: string, email: string): Promise<string> {
  const page = await authorize(authorizeParams(clientId, challenge));
  expect(page.statusCode).toBe(200);
  const cookie = String(page.headers['set-cookie']).split(';')[0] as string;
  const request = /name="request" value="([^"]+)"/.exec(page.body)?.[1] as string;
  const post = (form: Record<string, string>) =>
    testApp.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ request, ...form }).toString(),
    });
  const before = smtp.received.length;
  expect((await post({ action: 'send_code', email })).statusCode).toBe(200);
  const code = await codeMailedTo(smtp, email, before);
  const approved = await post({ action: 'approve', otp: code });
  expect(approved.statusCode).toBe(303);
  const location = new URL(approved.headers.location as string);
  expect(location.searchParams.get('state')).toBe('s1');
  expect(location.searchParams.get('iss')).toBe('http://localhost:3000');
  return location.searchParams.get('code') as string;
}

const token = (params: Record<string, string>) =>
  testApp.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(params).toString(),
  });

describe('POST /oauth/register', () => {
  it.each([
    [['https://app.example/cb', 'http://localhost:1234/cb', 'http://[::1]/cb'], 201, undefined],
    [['http://app.example/cb'], 400, 'invalid_redirect_uri'],
    [['https://app.example/cb#x'], 400, 'invalid_redirect_uri'],
    [['javascript:alert(1)'], 400, 'invalid_redirect_uri'],
    [[], 400, 'invalid_client_metadata'],
    ['https://app.example/cb', 400, 'invalid_client_metadata'],
  ])('%j → %i', async (uris, status, error) => {
    const { status: got, body } = await register(uris);
    expect(got).toBe(status);
    if (error) expect(body).toMatchObject({ error, error_description: expect.any(String) });
    else expect(body).toMatchObject({ client_id: expect.stringMatching(/^mcp_/), token_endpoint_auth_method: 'none' });
  });
});

describe('GET /oauth/authorize', () => {
  it('shows a page, never a redirect, for an unknown client or a redirect URI not registered', async () => {
    const { body } = await register();
    const { challenge } = pkce();
    for (const params of [
      authorizeParams('mcp_unknown', challenge),
      authorizeParams(body.client_id as string, challenge, { redirect_uri: 'https://attacker.example/cb' }),
      authorizeParams(body.client_id as string, challenge, { redirect_uri: `${REDIRECT}/more` }),
    ]) {
      const response = await authorize(params);
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers.location).toBeUndefined();
    }
  });

  it.each([
    [{ code_challenge: '' }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
    [{ scope: 'admin' }, 'invalid_scope'],
  ])('redirects %j with error=%s, state and iss', async (change, error) => {
    const { body } = await register();
    const params = { ...authorizeParams(body.client_id as string, pkce().challenge), ...change };
    if (params.code_challenge === '') delete (params as Partial<typeof params>).code_challenge;
    const response = await authorize(params);
    expect(response.statusCode).toBe(303);
    const location = new URL(response.headers.location as string);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: 's1', iss: 'http://localhost:3000' });
  });

  it('allows another port for a loopback redirect URI (RFC 8252 §7.3)', async () => {
    const { body } = await register();
    const response = await authorize(
      authorizeParams(body.client_id as string, pkce().challenge, { redirect_uri: 'http://127.0.0.1:5555/callback' }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:5555");
  });

  it('refuses a form posted without the browser cookie or from another origin', async () => {
    const { body } = await register();
    const page = await authorize(authorizeParams(body.client_id as string, pkce().challenge));
    const request = /name="request" value="([^"]+)"/.exec(page.body)?.[1] as string;
    const cookie = String(page.headers['set-cookie']).split(';')[0] as string;
    const payload = new URLSearchParams({ request, action: 'send_code', email: 'x@example.com' }).toString();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const withoutCookie = await testApp.app.inject({ method: 'POST', url: '/oauth/authorize', headers: form, payload });
    const otherOrigin = await testApp.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { ...form, cookie, origin: 'https://evil.example' },
      payload,
    });
    const otherBrowser = await testApp.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { ...form, cookie: `oauth-browser=${'a'.repeat(43)}` },
      payload,
    });
    for (const response of [withoutCookie, otherOrigin, otherBrowser]) expect(response.statusCode).toBe(400);
  });
});

describe('POST /oauth/token with authorization_code', () => {
  it('refuses a wrong verifier, another client, another redirect URI, another resource; then a code used twice revokes its tokens', async () => {
    const { body } = await register();
    const { body: other } = await register();
    const clientId = body.client_id as string;
    const { verifier, challenge } = pkce();
    const code = await approvedCode(clientId, challenge, 'codes@example.com');
    const exchange = { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier };
    for (const [change, error] of [
      [{ code_verifier: pkce().verifier }, 'invalid_grant'],
      [{ code_verifier: undefined }, 'invalid_request'],
      [{ client_id: other.client_id as string }, 'invalid_grant'],
      [{ redirect_uri: 'http://127.0.0.1:8976/other' }, 'invalid_grant'],
      [{ resource: 'http://localhost:3000/elsewhere' }, 'invalid_target'],
    ] as const) {
      const params = Object.fromEntries(Object.entries({ ...exchange, ...change }).filter(([, value]) => value !== undefined)) as Record<
        string,
        string
      >;
      const refused = await token(params);
      expect(refused.statusCode).toBe(400);
      expect(refused.headers['cache-control']).toBe('no-store');
      expect(refused.json()).toMatchObject({ error, error_description: expect.any(String) });
    }
    const issued = await token(exchange);
    expect(issued.statusCode).toBe(200);
    const { access_token: accessToken } = issued.json() as { access_token: string };
    expect(await testApp.services.auth.authenticatePerson(accessToken, 'http://localhost:3000/')).toMatchObject({
      email: 'codes@example.com',
    });
    const again = await token(exchange);
    expect(again.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await testApp.services.auth.authenticatePerson(accessToken, 'http://localhost:3000/')).toBeNull();
  });
});

// The MCP authorization flow end to end with oauth4webapi over a real socket: discovery, dynamic
// client registration, the consent page in Chromium (at 375 px, checked by axe-core), the code from
// the real SMTP server, tokens, an attributed inquiry, refresh rotation, reuse detection, revocation.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { launchChromium, launched } from '../helpers/browser.js';
import { type Callback, consentInBrowser, startCallback } from '../helpers/sign-in.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const insecure = { [oauth.allowInsecureRequests]: true };

let testApp: TestApp;
let smtp: TestSmtpServer;
let callback: Callback;
let chromium: { browser?: Browser; error?: unknown };
let base: string;
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  callback = await startCallback();
  chromium = await launchChromium();
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  testApp = await startTestApp({
    env: { PUBLIC_URL: base, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' },
    listen: true,
    port: reserved.port,
  });
  const issuer = new URL(base);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});
afterAll(async () => {
  await chromium?.browser?.close();
  await testApp?.close();
  await callback?.close();
  await smtp?.stop();
});

async function register(): Promise<oauth.Client> {
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    { client_name: 'Test MCP host', redirect_uris: [callback.uri], token_endpoint_auth_method: 'none' },
    insecure,
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

async function axeViolations(page: Page): Promise<unknown[]> {
  // Evaluated by the test's driver, which the page's CSP (script-src 'self') does not govern.
  await page.evaluate(AXE_SOURCE);
  return page.evaluate<unknown[]>(
    'axe.run().then((result) => result.violations.map((violation) => ({ id: violation.id, nodes: violation.nodes.length })))',
  );
}

/** A whole sign-in: the authorization URL opened in Chromium, consent given, the code exchanged. */
async function signIn(
  client: oauth.Client,
  email: string,
  options: { resource?: string; inspect?: (page: Page, step: string) => Promise<void> } = {},
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: callback.uri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    resource: options.resource ?? `${base}/mcp`,
  }).toString();
  const landed = callback.next();
  await consentInBrowser(launched(chromium), smtp, url.href, { email, ...(options.inspect && { inspect: options.inspect }) });
  const params = oauth.validateAuthResponse(as, client, await landed, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callback.uri, verifier, insecure);
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

describe('discovery', () => {
  it('advertises the authorization-code flow that standard clients look for', () => {
    expect(as).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  });
});

describe('oauth4webapi signs a person in', () => {
  it('registers, gets consent with a mailed code, and its token attributes an inquiry to the verified address', async () => {
    const client = await register();
    const seen: { step: string; violations: unknown[]; scrollWidth: number }[] = [];
    const tokens = await signIn(client, 'person@example.com', {
      resource: `${base}/`,
      inspect: async (page, step) => {
        if (step === 'email') {
          await expect(page.getByText('Test MCP host')).toBeDefined();
          expect(await page.textContent('main')).toContain(new URL(callback.uri).origin);
        }
        seen.push({
          step,
          violations: await axeViolations(page),
          scrollWidth: await page.evaluate<number>('document.documentElement.scrollWidth'),
        });
      },
    });
    expect(seen).toEqual([
      { step: 'email', violations: [], scrollWidth: 375 },
      { step: 'code', violations: [], scrollWidth: 375 },
    ]);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'inquiry:write', refresh_token: expect.stringMatching(/^rt_/) });

    const sent = await fetch(`${base}/api/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify(validInquiry({ message: 'Sent by a signed-in person through their agent.' })),
    });
    expect(sent.status).toBe(200);
    expect(sent.headers.get('www-authenticate')).toBeNull();
    const stored = await testApp.services.store.inquiries.findByReference(referenceOf(await sent.text()));
    const grant = await testApp.services.store.auth.findClient(stored?.clientId ?? '');
    expect(grant).toMatchObject({ registrationType: 'oauth', email: 'person@example.com', clientName: 'Test MCP host' });
    expect(await testApp.services.auth.authenticatePerson(tokens.access_token, `${base}/`)).toMatchObject({ email: 'person@example.com' });
  });

  it('rotates refresh tokens; a refresh token used twice revokes the whole sign-in', async () => {
    const client = await register();
    const first = await signIn(client, 'rotation@example.com');
    const refresh = (token: string) => oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, insecure);
    const second = await oauth.processRefreshTokenResponse(as, client, await refresh(first.refresh_token as string));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await testApp.services.auth.authenticatePerson(second.access_token, `${base}/mcp`)).not.toBeNull();

    const reused = await refresh(first.refresh_token as string);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    // The family is gone: the newer refresh token and every access token of the sign-in too.
    expect((await refresh(second.refresh_token as string)).status).toBe(400);
    expect(await testApp.services.auth.authenticatePerson(second.access_token, `${base}/mcp`)).toBeNull();
  });

  it('revokes a sign-in at /oauth/revoke with its refresh token', async () => {
    const client = await register();
    const tokens = await signIn(client, 'revoke@example.com');
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token as string, insecure),
    );
    expect(await testApp.services.auth.authenticatePerson(tokens.access_token, `${base}/mcp`)).toBeNull();
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, insecure);
    expect(refreshed.status).toBe(400);
  });

  it('sends the person back with access_denied when they deny', async () => {
    const client = await register();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: callback.uri,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
      state,
    }).toString();
    const landed = callback.next();
    await consentInBrowser(launched(chromium), smtp, url.href, { email: 'deny@example.com', decision: 'deny' });
    const back = await landed;
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state, iss: base });
    expect(() => oauth.validateAuthResponse(as, client, back, state)).toThrow();
  });
});

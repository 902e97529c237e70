// /mcp/verified end to end: the official MCP SDK client (v2) learns from the 401 to sign in, with no
// code written for this service: its OAuth support discovers, registers by DCR, the person consents
// in Chromium with the code from the real SMTP server; then submit_inquiry sends an inquiry that
// arrives attributed to the verified address, stored, in the webhook and in the CLI. /mcp stays open.
import {
  Client,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { launchChromium, launched } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { type Callback, consentInBrowser, startCallback } from '../helpers/sign-in.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

let testApp: TestApp;
let smtp: TestSmtpServer;
let webhook: TestWebhookReceiver;
let callback: Callback;
let chromium: { browser?: Browser; error?: unknown };
let base: string;
let database: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  webhook = await startWebhookReceiver();
  callback = await startCallback();
  chromium = await launchChromium();
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  testApp = await startTestApp({
    env: {
      PUBLIC_URL: base,
      SMTP_URL: smtp.url,
      INQUIRY_TO: 'studio@example.com',
      WEBHOOK_URL: webhook.url,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    },
    listen: true,
    port: reserved.port,
  });
  database = `sqlite:${testApp.dir}/studio.db`;
});
afterAll(async () => {
  await chromium?.browser?.close();
  await testApp?.close();
  await callback?.close();
  await webhook?.close();
  await smtp?.stop();
});

/** An MCP host's OAuth state, in memory: what the SDK asks it to keep and where it sends the person. */
class HostProvider implements OAuthClientProvider {
  readonly redirects: URL[] = [];
  information: Parameters<OAuthClientProvider['saveClientInformation'] & object>[0] | undefined;
  saved: Parameters<OAuthClientProvider['saveTokens']>[0] | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  constructor(private readonly redirectUri: string) {}
  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadata() {
    return { client_name: 'Desk agent', redirect_uris: [this.redirectUri], token_endpoint_auth_method: 'none' };
  }
  state() {
    return 'state-of-the-host';
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: NonNullable<HostProvider['information']>) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<HostProvider['saved']>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.redirects.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

const verifiedUrl = () => new URL(`${base}/mcp/verified`);

describe('/mcp/verified', () => {
  it('answers a request without a token 401, naming its own protected-resource metadata', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(verifiedUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      });
    const metadata = `${base}/.well-known/oauth-protected-resource/mcp/verified`;
    const anonymous = await post({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}"`);
    expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await anonymous.json()).toMatchObject({ status: 401, error: 'sign_in_required' });
    const forged = await post({ authorization: 'Bearer not-a-token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${metadata}"`);
    expect(await (await fetch(metadata)).json()).toMatchObject({ resource: `${base}/mcp/verified`, authorization_servers: [base] });
    // /mcp is as open as ever.
    expect(
      (
        await fetch(`${base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(initialize),
        })
      ).status,
    ).toBe(200);
  });

  it('the SDK client signs a person in from the 401 and submit_inquiry arrives attributed to the verified address', async () => {
    const provider = new HostProvider(callback.uri);
    const refused = new StreamableHTTPClientTransport(verifiedUrl(), { authProvider: provider });
    await expect(new Client({ name: 'desk-agent', version: '1.0.0' }).connect(refused)).rejects.toBeInstanceOf(UnauthorizedError);
    // Discovered from the 401 and registered by DCR: the person is sent to the consent page.
    expect(provider.information?.client_id).toMatch(/./);
    const authorization = provider.redirects.at(-1) as URL;
    expect(authorization.origin + authorization.pathname).toBe(`${base}/oauth/authorize`);
    expect(authorization.searchParams.get('resource')).toBe(`${base}/mcp/verified`);

    const landed = callback.next();
    await consentInBrowser(launched(chromium), smtp, authorization.href, { email: 'person@example.com' });
    const back = await landed;
    expect(back.searchParams.get('state')).toBe('state-of-the-host');
    await refused.finishAuth(back.searchParams);
    expect(provider.saved).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), refresh_token: expect.stringMatching(/^rt_/) });

    const client = new Client({ name: 'desk-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(verifiedUrl(), { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['get_studio_info', 'list_services', 'submit_inquiry']);
    const result = await client.callTool({
      name: 'submit_inquiry',
      arguments: validInquiry({ message: 'Sent through a signed-in MCP host, on behalf of its person.' }),
    });
    expect(result.isError).toBeFalsy();
    const receipt = result.structuredContent as { reference: string; attribution: { client_id: string | null } };
    expect(receipt.attribution.client_id).toMatch(/^agt_/);
    await client.close();

    const stored = await testApp.services.store.inquiries.findByReference(receipt.reference);
    expect(stored?.source).toBe('mcp');
    expect(await testApp.services.store.auth.findClient(stored?.clientId ?? '')).toMatchObject({
      registrationType: 'oauth',
      clientName: 'Desk agent',
      email: 'person@example.com',
    });

    await webhook.waitFor((received) => received.some((one) => one.body.includes(receipt.reference)));
    const delivered = webhook.received.find((one) => one.body.includes(receipt.reference));
    expect(delivered?.verified).toMatchObject({
      type: 'inquiry.received',
      data: {
        reference: receipt.reference,
        client_id: stored?.clientId,
        agent: { name: 'Desk agent', verified_email: 'person@example.com' },
      },
    });

    const shown = await runCli(['show', receipt.reference], { DATABASE_URL: database });
    expect(shown.stdout).toContain('Agent     Desk agent, for person@example.com (verified)\n');
    const json = JSON.parse((await runCli(['show', receipt.reference, '--json'], { DATABASE_URL: database })).stdout) as { agent: unknown };
    expect(json.agent).toEqual({ name: 'Desk agent', verifiedEmail: 'person@example.com' });
  });

  it('an inquiry over /mcp without a token names no agent in the webhook', async () => {
    const client = new Client({ name: 'open-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    const result = await client.callTool({
      name: 'submit_inquiry',
      arguments: validInquiry({ message: 'Sent with no sign-in at all, over the open endpoint.' }),
    });
    await client.close();
    const { reference } = result.structuredContent as { reference: string };
    await webhook.waitFor((received) => received.some((one) => one.body.includes(reference)));
    const delivered = webhook.received.find((one) => one.body.includes(reference));
    expect(delivered?.verified).toMatchObject({ data: { reference, client_id: null, agent: null } });
  });
});

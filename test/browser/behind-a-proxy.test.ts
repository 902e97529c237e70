// The service under a path behind a real reverse proxy, as docs/operations.md describes: /inquiry/… goes
// to the service's /… and /.well-known/… unchanged; PUBLIC_URL is the proxy's address with the path.
// The contact page (its proof-of-work worker too) and /docs in Debian's chromium, and discovery as
// oauth4webapi does it.
import { createServer, request as forward, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_IN_TEXT, reserveBaseUrl, startTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, launched } from '../helpers/browser.js';

const PREFIX = '/inquiry';

let testApp: TestApp;
let proxy: Server;
let publicUrl: string;
let launch: Awaited<ReturnType<typeof launchChromium>> = {};
/** Every path the proxy was asked for, and what it answered. */
const seen: string[] = [];

beforeAll(async () => {
  const reserved = await reserveBaseUrl();
  publicUrl = `${reserved.base}${PREFIX}`;
  testApp = await startTestApp({ listen: true, startWorker: false, env: { PUBLIC_URL: publicUrl } });
  const upstream = new URL(testApp.baseUrl ?? '');
  proxy = createServer((incoming, outgoing) => {
    const url = incoming.url ?? '/';
    const path = url.startsWith(`${PREFIX}/`) ? url.slice(PREFIX.length) : url.startsWith('/.well-known/') ? url : undefined;
    seen.push(`${url} ${path === undefined ? 404 : 'forwarded'}`);
    if (path === undefined) return void outgoing.writeHead(404).end();
    const relay = forward(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    relay.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(relay);
  });
  await new Promise<void>((resolve) => proxy.listen(reserved.port, '127.0.0.1', resolve));
  launch = await launchChromium();
}, 60_000);

afterAll(async () => {
  await launch.browser?.close();
  await new Promise((resolve) => proxy?.close(resolve));
  await testApp?.close();
});

async function openPage(path: string) {
  const context = await launched(launch).newContext();
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const requests: { url: string; status: number }[] = [];
  page.on('response', (response) => requests.push({ url: response.url(), status: response.status() }));
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const response = await page.goto(`${publicUrl}${path}`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  return { context, page, requests, pageErrors };
}

describe(`the service under ${PREFIX}, behind a proxy`, () => {
  it('serves the contact page with its own styles and script, and the form sends an inquiry', async () => {
    const { context, page, requests, pageErrors } = await openPage('/');
    try {
      // Every file the page asked for came from under the prefix, and came.
      expect(requests.map(({ url }) => new URL(url).pathname).every((path) => path.startsWith(`${PREFIX}/`))).toBe(true);
      expect(requests.filter(({ status }) => status !== 200)).toEqual([]);
      expect(requests.map(({ url }) => new URL(url).pathname)).toEqual(
        expect.arrayContaining([`${PREFIX}/assets/base.css`, `${PREFIX}/assets/site.css`, `${PREFIX}/assets/site.js`]),
      );
      for (const link of ['API reference', 'Agent auth', 'llms.txt']) {
        expect(await page.getByRole('link', { name: link }).getAttribute('href')).toMatch(new RegExp(`^${PREFIX}/`));
      }
      await page.getByLabel('First name').fill('Ada');
      await page.getByLabel('Last name').fill('Lovelace');
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Message').fill('Sent through the proxy.');
      await page.getByRole('button', { name: 'Send inquiry' }).click();
      const status = page.locator('#form-status.status--success');
      await status.waitFor({ state: 'visible' });
      const reference = REFERENCE_IN_TEXT.exec((await status.textContent()) ?? '')?.[0] ?? '';
      expect(await testApp.services.store.inquiries.findByReference(reference)).toMatchObject({ message: 'Sent through the proxy.' });
      expect(seen).toContain(`${PREFIX}/api/contact forwarded`);
      // The proof of work too: its challenge, and the worker's modules, imported relative to it.
      expect(seen).toEqual(
        expect.arrayContaining([`${PREFIX}/api/contact/challenge forwarded`, `${PREFIX}/assets/pow/workers/shared.js forwarded`]),
      );
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it.each(['/docs', '/docs/'])('renders the API reference at /docs from its files under the prefix (asked for as %s)', async (path) => {
    const { context, page, requests, pageErrors } = await openPage(path);
    try {
      await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 15_000 });
      // With a trailing slash the relative file names would miss: it is redirected, under the prefix.
      expect(page.url()).toBe(`${publicUrl}/docs`);
      expect(requests.filter(({ status }) => status !== 200)).toEqual(path === '/docs' ? [] : [{ url: `${publicUrl}/docs/`, status: 301 }]);
      expect(requests.map(({ url }) => new URL(url).pathname)).toEqual(
        expect.arrayContaining([`${PREFIX}/docs/swagger-ui-bundle.js`, `${PREFIX}/openapi.json`]),
      );
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('is discovered at the well-known addresses of an issuer and resources with a path (RFC 8414, RFC 9728)', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(publicUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    expect(as.token_endpoint).toBe(`${publicUrl}/oauth/token`);
    expect(seen).toContain(`/.well-known/oauth-authorization-server${PREFIX} forwarded`);
    // No OpenID provider, so no OpenID discovery document (docs/agent-auth.md).
    const oidc = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure });
    expect(oidc.status).toBe(404);
    for (const resource of [`${publicUrl}/`, `${publicUrl}/mcp`, `${publicUrl}/mcp/verified`]) {
      const identifier = new URL(resource);
      const metadata = await oauth.processResourceDiscoveryResponse(identifier, await oauth.resourceDiscoveryRequest(identifier, insecure));
      expect(metadata.authorization_servers).toEqual([publicUrl]);
    }
  });

  it('names the MCP endpoint with the path in the server card, and the official client reaches it there', async () => {
    const card = (await (await fetch(`${publicUrl}/mcp/server-card`)).json()) as {
      remotes: { url: string }[];
      transport: { endpoint: string };
    };
    expect(card.remotes[0]?.url).toBe(`${publicUrl}/mcp`);
    const endpoint = new URL(card.transport.endpoint, publicUrl);
    expect(endpoint.href).toBe(`${publicUrl}/mcp`);
    const client = new Client({ name: 'card-reader', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('submit_inquiry');
    await client.close();
  });
});

// The agent-readiness rules scanners apply to a site, run against the service over a real socket,
// the way a scanner sees it: from the base URL alone, following only what each document announces.
// Each describe is one rule; any regression (a document gone, a wrong media type, a dead link, a
// relation dropped, the form no longer a tool) fails here.
import LinkHeader from 'http-link-header';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveBaseUrl, startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
let base: string;
beforeAll(async () => {
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  testApp = await startTestApp({ env: { PUBLIC_URL: base }, listen: true, startWorker: false, port: reserved.port });
});
afterAll(async () => {
  await testApp?.close();
});

type Json = Record<string, unknown>;
const mediaType = (response: Response) => response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
const get = (path: string, headers: Record<string, string> = {}) => fetch(path.startsWith('http') ? path : `${base}${path}`, { headers });

/** A scanner follows a link only on the same origin; each must answer 200 (with the announced type, when one is). */
async function expectLive(href: string, type?: string) {
  expect(new URL(href).origin, href).toBe(base);
  const response = await get(href, type ? { accept: type } : {});
  expect(response.status, href).toBe(200);
  if (type) expect(mediaType(response), href).toBe(type);
}

/** The markdown links of a text: [label](url). */
const markdownLinks = (text: string) => [...text.matchAll(/\[[^\]]+\]\((https?:[^)\s]+)\)/g)].map((match) => match[1] ?? '');

describe('robots.txt', () => {
  it('is plain text that lets every crawler, AI crawlers included, read the whole site', async () => {
    const response = await get('/robots.txt');
    expect(response.status).toBe(200);
    expect(mediaType(response)).toBe('text/plain');
    const lines = (await response.text()).split('\n').map((line) => line.replace(/#.*/, '').trim());
    expect(lines).toContain('User-agent: *');
    expect(lines.filter((line) => /^disallow:\s*\S/i.test(line))).toEqual([]);
  });
});

describe('llms.txt', () => {
  it('follows the llmstxt.org shape (title, summary, sections of links), every link alive', async () => {
    const response = await get('/llms.txt');
    expect(response.status).toBe(200);
    expect(['text/plain', 'text/markdown']).toContain(mediaType(response));
    const text = await response.text();
    expect(text).toMatch(/^# \S.*\n\n> \S/);
    expect(text.match(/^## /gm)?.length).toBeGreaterThanOrEqual(2);
    const links = markdownLinks(text);
    for (const path of ['/.well-known/api-catalog', '/openapi.json', '/docs', '/auth.md', '/.well-known/mcp/server-card.json', '/mcp']) {
      expect(links, path).toContain(`${base}${path}`);
    }
    // The MCP endpoints answer POST only; every other link answers a GET.
    const mcp = new Set([`${base}/mcp`, `${base}/mcp/verified`]);
    for (const link of new Set(links)) if (!mcp.has(link)) await expectLive(link);
  });
});

describe('API catalog (RFC 9727)', () => {
  it('answers HEAD with a Link to itself (rel api-catalog), GET with a linkset of the API-catalog profile, every target alive', async () => {
    const head = await fetch(`${base}/.well-known/api-catalog`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(LinkHeader.parse(head.headers.get('link') ?? '').rel('api-catalog')[0]?.uri).toBe(`${base}/.well-known/api-catalog`);
    const response = await get('/.well-known/api-catalog', { accept: 'application/linkset+json, application/json' });
    expect(response.status).toBe(200);
    expect(mediaType(response)).toBe('application/linkset+json');
    expect(response.headers.get('content-type')).toContain('profile="https://www.rfc-editor.org/info/rfc9727"');
    const { linkset } = (await response.json()) as { linkset: Json[] };
    expect(linkset.length).toBeGreaterThan(0);
    const relations = new Set<string>();
    for (const { anchor, ...rest } of linkset) {
      expect(new URL(String(anchor)).origin).toBe(base);
      for (const [relation, targets] of Object.entries(rest)) {
        relations.add(relation);
        expect(Array.isArray(targets) && targets.length > 0, relation).toBe(true);
        for (const target of targets as { href: string; type?: string }[]) await expectLive(target.href, target.type);
      }
    }
    expect([...relations]).toEqual(expect.arrayContaining(['service-desc', 'service-doc', 'service-meta']));
  });
});

describe('Link headers on the home page (RFC 8288)', () => {
  it('advertise the catalog and the API description and documentation, well-formed, every target alive as announced', async () => {
    const head = await fetch(`${base}/`, { method: 'HEAD' });
    const value = head.headers.get('link') ?? '';
    expect(value).not.toBe('');
    const links = LinkHeader.parse(value);
    for (const rel of ['api-catalog', 'service-desc', 'service-doc', 'describedby']) expect(links.rel(rel).length, rel).toBeGreaterThan(0);
    for (const link of links.refs) {
      expect(link.uri).toMatch(/^https?:\/\//);
      await expectLive(link.uri, link.type);
    }
    expect((await get('/')).headers.get('link')).toBe(value);
  });
});

describe('markdown for agents', () => {
  it('GET / with Accept: text/markdown answers markdown, not HTML, and says it varies by Accept', async () => {
    const response = await get('/', { accept: 'text/markdown, text/html;q=0.9, */*;q=0.8' });
    expect(response.status).toBe(200);
    expect(mediaType(response)).toBe('text/markdown');
    expect(response.headers.get('vary')?.toLowerCase().split(/,\s*/)).toContain('accept');
    const text = await response.text();
    expect(text).toMatch(/^# \S/);
    expect(text).not.toMatch(/<(html|body|div|script)\b/i);
    expect(mediaType(await get('/', { accept: 'text/html' }))).toBe('text/html');
  });
});

describe('OAuth discovery', () => {
  it.each([
    ['/.well-known/oauth-protected-resource', '/'],
    ['/.well-known/oauth-protected-resource/mcp', '/mcp'],
  ])(
    'protected resource metadata %s names its resource and an authorization server whose metadata is well-formed',
    async (path, resource) => {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(mediaType(response)).toBe('application/json');
      const metadata = (await response.json()) as Json;
      expect(metadata.resource).toBe(`${base}${resource}`);
      const servers = metadata.authorization_servers as string[];
      expect(servers.length).toBeGreaterThan(0);
      for (const issuer of servers) {
        const as = (await (await get(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Json;
        expect(as.issuer).toBe(issuer);
        for (const endpoint of ['token_endpoint', 'jwks_uri', 'revocation_endpoint']) {
          expect(new URL(String(as[endpoint])).origin, endpoint).toBe(base);
        }
        expect((as.grant_types_supported as string[]).length).toBeGreaterThan(0);
        const jwks = (await (await get(String(as.jwks_uri))).json()) as { keys: Json[] };
        expect(jwks.keys.length).toBeGreaterThan(0);
        await expectLive(String((as.agent_auth as Json).skill), 'text/markdown');
      }
    },
  );
});

describe('MCP server card', () => {
  it('is JSON with a name and remotes that point at this service’s MCP endpoint', async () => {
    const response = await get('/.well-known/mcp/server-card.json');
    expect(response.status).toBe(200);
    expect(mediaType(response)).toMatch(/^application\/(mcp-server-card\+)?json$/);
    const card = (await response.json()) as { name?: unknown; remotes?: { type?: string; url?: string }[] };
    expect(typeof card.name === 'string' && card.name.includes('/')).toBe(true);
    expect(card.remotes?.length).toBeGreaterThan(0);
    expect(card.remotes?.map((remote) => remote.url)).toContain(`${base}/mcp`);
    expect(card.remotes?.every((remote) => remote.type === 'streamable-http')).toBe(true);
  });

  it('names the MCP versions each remote speaks, is served as its own media type when asked, and is in the MCP catalog', async () => {
    const asked = await get('/.well-known/mcp/server-card.json', { accept: 'application/mcp-server-card+json' });
    expect(mediaType(asked)).toBe('application/mcp-server-card+json');
    const card = (await asked.json()) as { name: string; remotes: { supportedProtocolVersions?: string[] }[] };
    for (const remote of card.remotes) expect(remote.supportedProtocolVersions).toContain('2026-07-28');
    // Reverse DNS of a domain name, never of an IP address (a registry checks it against the studio's site).
    expect(card.name).not.toMatch(/^\d+\.\d+\.\d+\.\d+\//);
    const catalog = await get('/.well-known/mcp/catalog.json');
    expect(catalog.status).toBe(200);
    expect(JSON.stringify(await catalog.json())).toContain(`${base}/.well-known/mcp/server-card.json`);
  });
});

describe('auth.md', () => {
  it('is markdown for agents, naming where to register and get a token', async () => {
    const response = await get('/auth.md');
    expect(response.status).toBe(200);
    expect(mediaType(response)).toBe('text/markdown');
    const text = await response.text();
    expect(text).toMatch(/^# \S/);
    expect(text).toContain(`${base}/agent/register`);
    expect(text).toContain(`${base}/oauth/token`);
  });
});

describe('WebMCP on the page', () => {
  it('a form is a declarative tool: a name, a description, and a description for each field an agent fills', async () => {
    const html = await (await get('/', { accept: 'text/html' })).text();
    const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].filter(([, attributes]) =>
      /\btoolname="/.test(attributes ?? ''),
    );
    expect(forms).toHaveLength(1);
    const [, attributes = '', body = ''] = forms[0] ?? [];
    expect(attributes).toMatch(/\btoolname="[a-z][a-z_-]*"/);
    expect(attributes).toMatch(/\btooldescription="[^"]{20,}"/);
    const controls = [...body.matchAll(/<(input|textarea|select)\b([^>]*)>/g)].map((match) => match[2] ?? '');
    // What an agent's browser makes a parameter of: named, not read-only, disabled or hidden.
    const parameters = controls.filter((control) => /\bname="/.test(control) && !/\b(readonly|disabled)\b|type="hidden"/.test(control));
    expect(parameters.length).toBeGreaterThanOrEqual(4);
    for (const control of parameters) expect(control, control).toMatch(/\btoolparamdescription="[^"]{10,}"/);
  });
});

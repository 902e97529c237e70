// Discovery documents read the way real clients read them: oauth4webapi's discovery processing
// (which enforces the issuer and resource rules of RFC 8414 and RFC 9728) over a real socket, the
// JWKS used by jose to verify a token the service signed, the RFC 9727 API catalog, and the contact
// page's Link header (parsed by http-link-header) and markdown rendering.
import LinkHeader from 'http-link-header';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveBaseUrl, startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
let base: string;
beforeAll(async () => {
  // PUBLIC_URL must be the address clients use: reserve it first.
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  testApp = await startTestApp({ env: { PUBLIC_URL: base }, listen: true, startWorker: false, port: reserved.port });
});
afterAll(async () => {
  await testApp.close();
});

const insecure = { [oauth.allowInsecureRequests]: true };

describe('authorization server metadata', () => {
  it('passes oauth4webapi discovery (RFC 8414) with this issuer', async () => {
    const issuer = new URL(base);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
    const as = await oauth.processDiscoveryResponse(issuer, response);
    expect(as.issuer).toBe(base);
    expect(as.token_endpoint).toBe(`${base}/oauth/token`);
    expect(as.jwks_uri).toBe(`${base}/.well-known/jwks.json`);
    expect(as.revocation_endpoint).toBe(`${base}/oauth/revoke`);
    expect(as.grant_types_supported).toEqual([
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect(as.agent_auth).toMatchObject({
      skill: `${base}/auth.md`,
      register_uri: `${base}/agent/register`,
      claim_uri: `${base}/agent/claim`,
      revocation_uri: `${base}/oauth/revoke`,
      // Both identity types (docs/agent-auth.md), in every deployment. No SMTP and no
      // trusted issuer here: no verified_email (a mailed code), and ID-JAGs answer issuer_not_enabled.
      identity_types_supported: ['anonymous', 'identity_assertion'],
      identity_assertion: {
        assertion_types_supported: ['urn:ietf:params:oauth:token-type:id-jag'],
        credential_types_supported: ['urn:ietf:params:oauth:token-type:jwt'],
      },
    });
    expect(as.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  it.each([
    [
      'a trusted issuer',
      { TRUSTED_ISSUERS: '{"https://idp.example":"https://idp.example/jwks.json"}' },
      ['urn:ietf:params:oauth:token-type:id-jag'],
    ],
    [
      'mail',
      { SMTP_URL: 'smtp://127.0.0.1:2525', INQUIRY_TO: 'studio@example.com' },
      ['urn:ietf:params:oauth:token-type:id-jag', 'verified_email'],
    ],
    [
      'both',
      {
        TRUSTED_ISSUERS: '{"https://idp.example":"https://idp.example/jwks.json"}',
        SMTP_URL: 'smtp://127.0.0.1:2525',
        INQUIRY_TO: 'studio@example.com',
      },
      ['urn:ietf:params:oauth:token-type:id-jag', 'verified_email'],
    ],
  ])('offers identity assertions with %s: verified_email only where a code can be mailed', async (_case, env, types) => {
    const other = await startTestApp({ env: { PUBLIC_URL: 'https://studio.example', ...env }, startWorker: false });
    try {
      const as = (await other.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
      expect(as.agent_auth).toMatchObject({
        identity_types_supported: ['anonymous', 'identity_assertion'],
        identity_assertion: { assertion_types_supported: types },
      });
      expect(as.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
    } finally {
      await other.close();
    }
  });

  it('offers no OpenID discovery, which an OIDC client is told plainly', async () => {
    const issuer = new URL(base);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure });
    await expect(oauth.processDiscoveryResponse(issuer, response)).rejects.toThrow();
  });

  it('has no empty arrays anywhere (RFC 8414 §3.2)', async () => {
    const emptyArrays: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (Array.isArray(value)) {
        if (value.length === 0) emptyArrays.push(path);
        for (const [i, item] of value.entries()) walk(item, `${path}/${i}`);
      } else if (value && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) walk(child, `${path}/${key}`);
      }
    };
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      walk(await (await fetch(`${base}${path}`)).json(), path);
    }
    expect(emptyArrays).toEqual([]);
  });
});

describe('protected resource metadata', () => {
  it.each([
    ['/', '/.well-known/oauth-protected-resource'],
    ['/mcp', '/.well-known/oauth-protected-resource/mcp'],
  ])('for %s passes oauth4webapi resource discovery (RFC 9728) and names this issuer', async (path, wellKnown) => {
    const resource = new URL(`${base}${path}`);
    const response = await oauth.resourceDiscoveryRequest(resource, insecure);
    expect(new URL(response.url).pathname).toBe(wellKnown);
    const metadata = await oauth.processResourceDiscoveryResponse(resource, response);
    expect(metadata.authorization_servers).toEqual([base]);
    expect(metadata.scopes_supported).toContain('inquiry:write');
    expect(metadata.bearer_methods_supported).toContain('header');
  });
});

describe('every discovery document', () => {
  it.each([
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource/mcp/verified',
    '/.well-known/oauth-authorization-server',
    '/.well-known/jwks.json',
  ])('%s is JSON, open to any origin and cacheable', async (path) => {
    const response = await fetch(`${base}${path}`, { headers: { origin: 'https://agent.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
  });
});

describe('OpenID discovery', () => {
  it('is not served: the service is an OAuth authorization server, not an OpenID provider', async () => {
    expect((await fetch(`${base}/.well-known/openid-configuration`)).status).toBe(404);
  });
});

describe('JWKS', () => {
  it('publishes public ES256 keys only, and verifies what the service signs', async () => {
    const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
      expect(key.d).toBeUndefined();
    }
    const token = await testApp.services.keys.sign({ iss: base, aud: `${base}/`, sub: 'test' }, { typ: 'at+jwt', expiresInSeconds: 60 });
    const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`)), {
      issuer: base,
      audience: `${base}/`,
    });
    expect(payload.sub).toBe('test');
    expect(protectedHeader.kid).toBe(jwks.keys[0]?.kid);
  });

  it('keeps the same key across restarts (it lives in the database)', async () => {
    const before = await (await fetch(`${base}/.well-known/jwks.json`)).json();
    const again = await startTestApp({ dir: testApp.dir, env: { PUBLIC_URL: base }, startWorker: false });
    expect(again.services.keys.publicJwks()).toEqual(before);
    await again.close();
  });
});

/** The media type of a Content-Type, without its parameters. */
const mediaType = (contentType: string | null) => contentType?.split(';')[0]?.trim() ?? '';

/** Every target answers a plain GET (with Accept of its type) with 200 and the type it was announced with. */
async function expectReachable(targets: readonly { href: string; type?: string }[]) {
  for (const { href, type } of targets) {
    expect(href.startsWith(`${base}/`), href).toBe(true);
    const response = await fetch(href, { headers: type ? { accept: type } : {} });
    expect(response.status, href).toBe(200);
    if (type) expect(mediaType(response.headers.get('content-type')), href).toBe(type);
  }
}

describe('API catalog (RFC 9727)', () => {
  type Target = { href: string; type: string; title: string };
  type Context = { anchor: string } & Record<string, Target[]>;

  it('is a linkset with the API-catalog profile, one context per API, every target reachable as announced', async () => {
    const response = await fetch(`${base}/.well-known/api-catalog`, { headers: { origin: 'https://agent.example' } });
    expect(response.status).toBe(200);
    const contentType = response.headers.get('content-type') ?? '';
    expect(mediaType(contentType)).toBe('application/linkset+json');
    expect(contentType).toContain('profile="https://www.rfc-editor.org/info/rfc9727"');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const { linkset } = (await response.json()) as { linkset: Context[] };
    expect(linkset.map((context) => context.anchor)).toEqual([`${base}/`, `${base}/mcp`]);
    const [api, mcp] = linkset as [Context, Context];
    expect(api['service-desc']?.map((t) => t.href)).toEqual([`${base}/openapi.json`]);
    expect(api['service-doc']?.map((t) => t.href)).toEqual([`${base}/docs`, `${base}/auth.md`]);
    expect(api['service-meta']?.map((t) => t.href)).toEqual([`${base}/.well-known/oauth-protected-resource`]);
    expect(api.describedby?.map((t) => t.href)).toEqual([`${base}/llms.txt`]);
    expect(mcp['service-desc']?.map((t) => t.href)).toEqual([`${base}/.well-known/mcp/server-card.json`]);
    expect(mcp['service-meta']?.map((t) => t.href)).toEqual([`${base}/.well-known/oauth-protected-resource/mcp`]);
    for (const context of linkset) {
      const { anchor: _anchor, ...relations } = context;
      for (const [relation, targets] of Object.entries(relations)) {
        expect(Array.isArray(targets) && targets.length > 0, relation).toBe(true);
        await expectReachable(targets);
      }
    }
  });

  it('answers HEAD with no body and a Link header naming itself with the api-catalog relation', async () => {
    const response = await fetch(`${base}/.well-known/api-catalog`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const links = LinkHeader.parse(response.headers.get('link') ?? '');
    expect(links.rel('api-catalog').map((link) => link.uri)).toEqual([`${base}/.well-known/api-catalog`]);
  });
});

describe('the contact page for agents', () => {
  it('links the catalog, the API description and documentation, the server card, llms.txt and its markdown (RFC 8288)', async () => {
    for (const method of ['GET', 'HEAD']) {
      const response = await fetch(`${base}/`, { method });
      const links = LinkHeader.parse(response.headers.get('link') ?? '');
      const of = (rel: string) => links.rel(rel).map((link) => [link.uri, link.type]);
      expect(of('api-catalog'), method).toEqual([[`${base}/.well-known/api-catalog`, 'application/linkset+json']]);
      expect(of('service-desc')).toEqual([
        [`${base}/openapi.json`, 'application/json'],
        [`${base}/.well-known/mcp/server-card.json`, 'application/json'],
      ]);
      expect(of('service-doc')).toEqual([
        [`${base}/docs`, 'text/html'],
        [`${base}/auth.md`, 'text/markdown'],
      ]);
      expect(of('describedby')).toEqual([[`${base}/llms.txt`, 'text/plain']]);
      expect(of('alternate')).toEqual([[`${base}/`, 'text/markdown']]);
      await expectReachable(links.refs.map((link) => ({ href: link.uri, type: link.type ?? '' })));
    }
  });

  it('answers a markdown rendering to Accept: text/markdown: the studio, its services, how to send an inquiry', async () => {
    const response = await fetch(`${base}/`, { headers: { accept: 'text/markdown' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(response.headers.get('vary')?.split(/,\s*/)).toContain('Accept');
    const text = await response.text();
    const profile = testApp.profile;
    expect(text.startsWith(`# ${profile.name}\n`)).toBe(true);
    for (const service of profile.services) expect(text).toContain(`### ${service.name}\n\n${service.description}`);
    expect(text).toContain(`POST ${base}/api/contact`);
    expect(text).toContain(`[MCP server](${base}/mcp)`);
    expect(text).toContain('WebMCP tool `submit_inquiry`');
    expect(text).not.toMatch(/<[a-z]+[\s>]/i);
    const linked = [...text.matchAll(/\]\((http[^)]+)\)/g)].map((match) => match[1] ?? '');
    expect(linked).toEqual(
      expect.arrayContaining([
        `${base}/.well-known/api-catalog`,
        `${base}/openapi.json`,
        `${base}/docs`,
        `${base}/auth.md`,
        `${base}/llms.txt`,
        `${base}/.well-known/mcp/server-card.json`,
      ]),
    );
    // The MCP endpoints answer POST only.
    const reachable = [...new Set(linked)].filter((url) => !url.endsWith('/mcp') && !url.endsWith('/mcp/verified'));
    await expectReachable(reachable.map((href) => ({ href })));
  });

  it.each([
    ['text/markdown, text/html, */*', 'text/markdown'],
    ['text/markdown, text/plain;q=0.9, */*;q=0.8', 'text/markdown'],
    ['text/html;q=0.9, text/markdown', 'text/markdown'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/html'],
    ['text/markdown;q=0.5, text/html', 'text/html'],
    ['*/*', 'text/html'],
    ['application/json', 'text/html'],
    [undefined, 'text/html'],
  ])('Accept: %s answers %s, revalidated by its own ETag', async (accept, expected) => {
    const headers: Record<string, string> = accept === undefined ? {} : { accept };
    const response = await fetch(`${base}/`, { headers });
    expect(mediaType(response.headers.get('content-type'))).toBe(expected);
    expect(response.headers.get('vary')?.split(/,\s*/)).toContain('Accept');
    const etag = response.headers.get('etag') ?? '';
    expect((await fetch(`${base}/`, { headers: { ...headers, 'if-none-match': etag } })).status).toBe(304);
  });
});

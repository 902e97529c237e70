// GET /openapi.json and GET /docs: the document is valid OpenAPI 3.1, is built from the very schema
// objects the routes validate with, describes every route the app registers (and nothing else), and
// the interactive reference serves only its own files, under a CSP that relaxes styles alone.
import { createHash } from 'node:crypto';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientMetadataSchema } from '../../src/auth/oauth-schemas.js';
import {
  anonymousRegistrationSchema,
  claimSchema,
  idJagRegistrationSchema,
  verifiedEmailRegistrationSchema,
} from '../../src/auth/schemas.js';
import { healthSchema } from '../../src/http/routes/health.js';
import { inquirySchema } from '../../src/inquiries/schema.js';
import { submitInquiryInputSchema, TOOLS } from '../../src/mcp/tools.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'delete', 'put', 'patch'] as const;

let testApp: TestApp;
let served: OpenApiDocument;
let built: OpenApiDocument;

// With SMTP configured, so that every route is registered: the sign-in flow's only exist then.
beforeAll(async () => {
  testApp = await startTestApp({
    startWorker: false,
    env: { PUBLIC_URL: 'https://studio.example', SMTP_URL: 'smtp://127.0.0.1:2525', INQUIRY_TO: 'studio@example.com' },
  });
  served = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  built = buildOpenApiDocument({ config: testApp.config, profile: testApp.profile });
});
afterAll(async () => {
  await testApp?.close();
});

function operations(doc: OpenApiDocument): { path: string; method: string; operation: Json }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [{ path, method, operation: item[method] as Json }] : [])),
  );
}

describe('GET /openapi.json', () => {
  it('is served as cacheable, CORS-open JSON, the document built at registration', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(served).toEqual(JSON.parse(JSON.stringify(built)));
  });

  it('validates as OpenAPI 3.1', async () => {
    const result = await validate(structuredClone(served) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('declares version 1.0.0, the public URL as its server and the required operation ids', () => {
    expect(served.openapi).toBe('3.1.0');
    expect(served.info.version).toBe('1.0.0');
    expect(served.servers).toEqual([{ url: 'https://studio.example' }]);
    expect(served.paths['/api/contact']?.post?.operationId).toBe('submitInquiry');
    expect(served.paths['/api/health']?.get?.operationId).toBe('getHealth');
    const ids = operations(served).map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the optional bearer scheme on the contact and MCP endpoints, and the required one on /mcp/verified', () => {
    expect(served.components.securitySchemes).toMatchObject({ bearer: { type: 'http', scheme: 'bearer' } });
    expect(served.security).toBeUndefined();
    for (const { path, method, operation } of operations(served)) {
      const optional = (path === '/api/contact' || path === '/mcp') && method === 'post' ? [{}, { bearer: [] }] : undefined;
      const expected = path === '/mcp/verified' && method === 'post' ? [{ bearer: [] }] : optional;
      expect(operation.security, `${method} ${path}`).toEqual(expected);
    }
  });

  it('holds no unreplaced template in any description, summary or title: every address is the real one', () => {
    const texts: { at: string; text: string }[] = [];
    const walk = (value: unknown, at: string) => {
      // Arrays too: their entries are keyed by index.
      if (value && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) {
          if (typeof child === 'string' && ['description', 'summary', 'title'].includes(key))
            texts.push({ at: `${at}/${key}`, text: child });
          else walk(child, `${at}/${key}`);
        }
      }
    };
    walk(served, '');
    expect(texts.length).toBeGreaterThan(100);
    // A base-URL placeholder (B/, B/mcp, "B:"), an interpolation left as text, or one that failed.
    const template = /(^|[\s(`'"])B(\/|:\s)|\$\{|\{\{|<base>|\bundefined\b|\[object Object\]|\bNaN\b/;
    expect(texts.filter(({ text }) => template.test(text))).toEqual([]);
    const tokenRequest = served.components.schemas.JwtBearerTokenRequest as { properties: { resource: Json } };
    expect(tokenRequest.properties.resource.description).toBe(
      'RFC 8707: https://studio.example/ (the default), https://studio.example/mcp or https://studio.example/mcp/verified (this one needs a signed-in person).',
    );
  });

  it('contains no $id: every validating schema is a component, referenced by $ref', () => {
    expect(JSON.stringify(served)).not.toContain('"$id"');
    const contact = served.paths['/api/contact']?.post as unknown as { requestBody: { content: Record<string, { schema: Json }> } };
    expect(contact.requestBody.content['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Inquiry' });
  });
});

describe('the schemas are the objects the routes validate with', () => {
  const withoutId = <S extends { $id: string }>({ $id: _id, ...rest }: S) => rest;
  const schema = (name: string) => built.components.schemas[name] as Json;

  it('Inquiry: inquirySchema without its $id, its very property objects', () => {
    expect(schema('Inquiry')).toEqual(withoutId(inquirySchema));
    expect(schema('Inquiry').properties).toBe(inquirySchema.properties);
    expect(schema('Inquiry').required).toBe(inquirySchema.required);
    for (const [name, property] of Object.entries(inquirySchema.properties)) {
      expect((schema('Inquiry').properties as Json)[name]).toBe(property);
    }
  });

  it('Health, the registration and claim requests: the same objects', () => {
    const pairs = [
      ['Health', healthSchema],
      ['AnonymousRegistration', anonymousRegistrationSchema],
      ['VerifiedEmailRegistration', verifiedEmailRegistrationSchema],
      ['IdJagRegistration', idJagRegistrationSchema],
      ['ClaimRequest', claimSchema],
      ['OAuthClientMetadata', clientMetadataSchema],
    ] as const;
    for (const [name, source] of pairs) {
      expect(schema(name), name).toEqual(withoutId(source));
      expect(schema(name).properties, name).toBe(source.properties);
    }
  });

  it('the MCP tools: the arguments are the tools’ own input schemas (submit_inquiry shares the Inquiry properties)', () => {
    const variants = (schema('McpToolCallParams').oneOf as { properties: { name: { const: string }; arguments: unknown } }[]).map(
      (variant) => [variant.properties.name.const, variant.properties.arguments],
    );
    expect(variants).toEqual(TOOLS.map((tool) => [tool.name, tool.inputSchema]));
    const submit = variants.find(([name]) => name === 'submit_inquiry')?.[1] as typeof submitInquiryInputSchema;
    expect(submit).toBe(submitInquiryInputSchema);
    expect(submit.properties.email).toBe(inquirySchema.properties.email);
  });
});

/** Every (METHOD, path) the app routes, read from Fastify's route tree; HEAD and OPTIONS are Fastify's and CORS's own. */
function registeredRoutes(app: FastifyInstance): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (depth === 0 ? '' : (stack[depth - 1] ?? '')) + match[2];
    stack[depth] = path;
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.add(`${method} ${path}`);
    }
  }
  return routes;
}

/** The concrete routes a documented path stands for: `{x}` with an enum expands to each value, otherwise Fastify's `:x`. */
function concretePaths(path: string, operation: Json): string[] {
  let paths = [path];
  for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
    const parameter = (operation.parameters as Json[] | undefined)?.find((p) => p.name === name && p.in === 'path');
    const values = ((parameter?.schema as Json | undefined)?.enum as string[] | undefined) ?? [`:${name}`];
    paths = paths.flatMap((p) => values.map((value) => p.replace(`{${name}}`, value)));
  }
  return paths;
}

/**
 * Validates against the component schema `name` of `doc`, with ajv as the contract test uses it (JSON
 * Schema 2020-12, as OpenAPI 3.1): the document is added whole so that its `#/components/...` $refs
 * resolve (its top-level members are not JSON Schema keywords). Returns the errors, "" when valid.
 */
function schemaOf(doc: OpenApiDocument, name: string): (value: unknown) => string {
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  addFormats.default(ajv);
  for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'components']) ajv.addKeyword(keyword);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const validate: ValidateFunction = ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
  return (value) => (validate(value) ? '' : ajv.errorsText(validate.errors));
}

const AS_METADATA_PATHS = ['/.well-known/oauth-authorization-server'] as const;
const TRUSTED_ISSUERS = JSON.stringify({ 'https://idp.example': 'https://idp.example/jwks.json' });
const SMTP = { SMTP_URL: 'smtp://127.0.0.1:2525', INQUIRY_TO: 'studio@example.com' };
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

// Each configuration serves its own agent_auth block (verified_email only where a code can be
// mailed): the served document and the document's own example of it must both be valid against the
// schema the same service publishes, the default deployment (no mail, no issuer) included.
const EVERY_TYPE = ['anonymous', 'identity_assertion'];
describe.each<{ name: string; env: Record<string, string>; types: string[]; assertionTypes: string[] }>([
  { name: 'neither SMTP_URL nor TRUSTED_ISSUERS (the default)', env: {}, types: EVERY_TYPE, assertionTypes: [ID_JAG] },
  { name: 'SMTP_URL only', env: SMTP, types: EVERY_TYPE, assertionTypes: [ID_JAG, 'verified_email'] },
  { name: 'TRUSTED_ISSUERS only', env: { TRUSTED_ISSUERS }, types: EVERY_TYPE, assertionTypes: [ID_JAG] },
  {
    name: 'SMTP_URL and TRUSTED_ISSUERS',
    env: { ...SMTP, TRUSTED_ISSUERS },
    types: EVERY_TYPE,
    assertionTypes: [ID_JAG, 'verified_email'],
  },
])('authorization server metadata with $name', ({ env, types, assertionTypes }) => {
  let configured: TestApp;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    configured = await startTestApp({ startWorker: false, env: { PUBLIC_URL: 'https://studio.example', ...env } });
    doc = (await configured.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(async () => {
    await configured?.close();
  });

  it('is served, and exemplified in /openapi.json, as a valid AuthorizationServerMetadata', async () => {
    const errorsOf = schemaOf(doc, 'AuthorizationServerMetadata');
    for (const path of AS_METADATA_PATHS) {
      const response = await configured.app.inject({ method: 'GET', url: path });
      expect(response.statusCode, path).toBe(200);
      const metadata = response.json() as { agent_auth: Json };
      expect(metadata.agent_auth.identity_types_supported, path).toEqual(types);
      expect((metadata.agent_auth.identity_assertion as Json).assertion_types_supported, path).toEqual(assertionTypes);
      expect(errorsOf(metadata), `${path}: the served document`).toBe('');
      const operation = doc.paths[path]?.get as unknown as { responses: Record<string, { content: Record<string, Json> }> };
      const content = operation.responses['200']?.content['application/json'] as { examples: { served: { value: unknown } } };
      expect(content.examples.served.value, `${path}: the example is the served document`).toEqual(metadata);
      expect(errorsOf(content.examples.served.value), `${path}: the example`).toBe('');
    }
  });
});

describe('AgentAuth', () => {
  it('the schema requires both identity types, the identity_assertion block, and the ID-JAG type in it', async () => {
    const errorsOf = schemaOf(served, 'AuthorizationServerMetadata');
    const metadata = (await testApp.app.inject({ method: 'GET', url: AS_METADATA_PATHS[0] })).json() as { agent_auth: Json };
    const block = { assertion_types_supported: [ID_JAG], credential_types_supported: ['urn:ietf:params:oauth:token-type:jwt'] };
    const withTypes = (identityTypes: string[], identityAssertion?: Json) => {
      const { identity_assertion: _block, ...agentAuth } = metadata.agent_auth;
      return {
        ...metadata,
        agent_auth: {
          ...agentAuth,
          identity_types_supported: identityTypes,
          ...(identityAssertion && { identity_assertion: identityAssertion }),
        },
      };
    };
    expect(errorsOf(withTypes(['anonymous', 'identity_assertion'], block))).toBe('');
    expect(
      errorsOf(withTypes(['anonymous', 'identity_assertion'], { ...block, assertion_types_supported: [ID_JAG, 'verified_email'] })),
    ).toBe('');
    expect(errorsOf(withTypes(['anonymous', 'identity_assertion']))).toContain("must have required property 'identity_assertion'");
    expect(errorsOf(withTypes(['anonymous'], block)), 'identity_assertion not listed').toContain('must contain at least 1 valid item');
    expect(errorsOf(withTypes(['anonymous', 'identity_assertion'], { ...block, assertion_types_supported: ['verified_email'] }))).toContain(
      'must contain at least 1 valid item',
    );
  });
});

describe('route coverage', () => {
  it('documents every route the app registers, and registers every route it documents', () => {
    // The studio's inbox (/inbox) is its web pages behind a sign-in (docs/inbox.md), not the API.
    const all = registeredRoutes(testApp.app);
    expect(all).toContain('GET /inbox');
    const registered = new Set([...all].filter((route) => !/^[A-Z]+ \/inbox(?:\/|$)/.test(route)));
    expect(registered.size).toBeGreaterThan(20);
    const documented = new Set(
      operations(served).flatMap(({ path, method, operation }) =>
        concretePaths(path, operation).map((p) => `${method.toUpperCase()} ${p}`),
      ),
    );
    expect(
      [...registered].filter((route) => !documented.has(route)),
      'registered but not documented',
    ).toEqual([]);
    expect(
      [...documented].filter((route) => !registered.has(route)),
      'documented but not registered',
    ).toEqual([]);
  });

  it('covers every endpoint of the interface (docs/api.md)', () => {
    for (const [method, path] of [
      ['post', '/api/contact'],
      ['get', '/api/health'],
      ['get', '/.well-known/oauth-protected-resource'],
      ['get', '/.well-known/oauth-authorization-server'],
      ['get', '/.well-known/mcp/server-card.json'],
      ['get', '/.well-known/api-catalog'],
      ['post', '/agent/register'],
      ['post', '/agent/claim'],
      ['post', '/oauth/token'],
      ['post', '/oauth/revoke'],
      ['post', '/mcp'],
      ['post', '/mcp/verified'],
      ['get', '/.well-known/oauth-protected-resource/mcp/verified'],
      ['post', '/oauth/register'],
      ['get', '/oauth/authorize'],
      ['post', '/oauth/authorize'],
      ['get', '/openapi.json'],
      ['get', '/auth.md'],
    ] as const) {
      expect(served.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
  });
});

describe('GET /docs', () => {
  it('serves an HTML page whose scripts and styles are its own /docs/ files, each answering 200', async () => {
    const page = await testApp.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    // No inline script: every <script> has a src.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    // Relative to the page, so that they hold under a proxy's path too (docs/operations.md),
    // and each with the hash of its content: a page fresh from the server never runs a file
    // cached from another release.
    const files = assets.map((asset) => asset.replace(/\?v=[0-9a-f]{12}$/, ''));
    expect(files).toEqual(expect.arrayContaining(['docs/swagger-ui.css', 'docs/swagger-ui-bundle.js', 'docs/swagger-init.js']));
    expect(page.headers['cache-control']).toBe('public, max-age=300');
    for (const asset of assets) {
      expect(asset, 'a file of this page, from this origin').toMatch(/^docs\/[\w.-]+\?v=[0-9a-f]{12}$/);
      const response = await testApp.app.inject({ method: 'GET', url: `/${asset}` });
      expect(response.statusCode, asset).toBe(200);
      expect(response.rawPayload.length, asset).toBeGreaterThan(0);
      expect(asset.endsWith(createHash('sha256').update(response.rawPayload).digest('hex').slice(0, 12)), asset).toBe(true);
      expect(response.headers['cache-control'], asset).toBe('public, max-age=31536000, immutable');
      for (const other of [asset.replace(/\?.*/, ''), asset.replace(/v=.*/, 'v=000000000000')]) {
        const unversioned = await testApp.app.inject({ method: 'GET', url: `/${other}` });
        expect(unversioned.statusCode, other).toBe(200);
        expect(unversioned.headers['cache-control'], other).toBe('public, max-age=3600');
      }
    }
    const init = await testApp.app.inject({ method: 'GET', url: '/docs/swagger-init.js' });
    expect(init.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(init.body).toContain("url: 'openapi.json'");
  });

  it('relaxes style-src for /docs only; scripts stay self', async () => {
    const docs = await testApp.app.inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    const csp = String(docs.headers['content-security-policy']);
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("script-src 'self';");
    expect(csp.match(/'unsafe-inline'/g)).toHaveLength(1);
    expect(csp).not.toContain('unsafe-eval');
    const other = await testApp.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(other.headers['content-security-policy']).not.toContain('unsafe-inline');
  });

  it('answers 304 to a matching If-None-Match, or to "*"', async () => {
    const first = await testApp.app.inject({ method: 'GET', url: '/docs/swagger-ui.css' });
    const etag = String(first.headers.etag);
    for (const ifNoneMatch of [etag, '*', `"other", W/${etag}`]) {
      const again = await testApp.app.inject({ method: 'GET', url: '/docs/swagger-ui.css', headers: { 'if-none-match': ifNoneMatch } });
      expect(again.statusCode, ifNoneMatch).toBe(304);
      expect(again.body).toBe('');
    }
    const other = await testApp.app.inject({ method: 'GET', url: '/docs/swagger-ui.css', headers: { 'if-none-match': '"other"' } });
    expect(other.statusCode).toBe(200);
  });
});

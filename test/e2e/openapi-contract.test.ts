// Contract test: every operation of /openapi.json over a socket, success and each error that can be
// provoked, its status, content type, body (JSON Schema 2020-12) and headers checked against the document.
// Three services: healthy (with SMTP, for claims and sign-ins), tiny rate limits (429s), a closed
// store (500s, 503); all three with SMTP, so that the sign-in routes exist on each.
import { createHash, randomUUID } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { solveProof } from '../helpers/proof.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

type Json = Record<string, unknown>;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const MCP_ACCEPT = 'application/json, text/event-stream';
const HOUR = 60 * 60 * 1000;

let smtp: TestSmtpServer;
let main: TestApp;
let limited: TestApp;
let broken: TestApp;
let doc: OpenApiDocument;
const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
addFormats.default(ajv);
// The document is added whole, so that every `#/components/...` $ref inside it resolves; its
// top-level members are not JSON Schema keywords.
for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'components']) ajv.addKeyword(keyword);
const validators = new Map<string, ValidateFunction>();
/** Which statuses each operation was seen to answer. */
const seen = new Map<string, Set<number>>();

beforeAll(async () => {
  smtp = await startSmtpServer();
  main = await startTestApp({
    listen: true,
    env: { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com', RATE_LIMIT_INQUIRIES: '100/h' },
  });
  const one = { max: 1, timeWindow: HOUR };
  const mail = { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' };
  limited = await startTestApp({
    listen: true,
    startWorker: false,
    env: { RATE_LIMIT_INQUIRIES: '1/h', ...mail },
    authRateLimits: { register: one, claim: one, token: one, revoke: one, authorize: one },
    challengeRateLimit: one,
  });
  broken = await startTestApp({ listen: true, startWorker: false, env: mail });
  doc = (await (await fetch(`${main.baseUrl}/openapi.json`)).json()) as OpenApiDocument;
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
});
afterAll(async () => {
  await Promise.all([main?.close(), limited?.close(), broken?.close()]);
  await smtp?.stop();
});

const pointer = (...tokens: string[]) => tokens.map((t) => encodeURIComponent(t.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

function validator(...tokens: string[]): ValidateFunction {
  const ref = `openapi.json#/${pointer(...tokens)}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

function resolve<T>(value: T | { $ref: string }): T {
  const ref = (value as { $ref?: string }).$ref;
  if (ref === undefined) return value as T;
  let target: unknown = doc;
  for (const token of ref.slice(2).split('/')) target = (target as Json)[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  return target as T;
}

interface Call {
  readonly app?: TestApp;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  /** The documented path (template), and the path requested when it has parameters. */
  readonly path: string;
  readonly url?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** Sends the request and checks the answer against the document; returns it for further checks. */
async function call({ app = main, method = 'GET', path, url = path, headers, body }: Call) {
  // A redirect is an answer of its own, checked against the document like any other.
  const response = await fetch(`${app.baseUrl}${url}`, {
    method,
    redirect: 'manual',
    ...(headers && { headers }),
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  const label = `${method} ${url} → ${response.status}`;
  const operation = doc.paths[path]?.[method.toLowerCase()] as { operationId: string; responses: Record<string, Json> } | undefined;
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  if (!operation) throw new Error('unreachable');
  const status = String(response.status);
  const documented = operation.responses[status] && resolve(operation.responses[status]);
  expect(documented, `${label}: the document lacks this status`).toBeDefined();
  if (!seen.has(operation.operationId)) seen.set(operation.operationId, new Set());
  seen.get(operation.operationId)?.add(response.status);

  const content = documented?.content as Record<string, Json> | undefined;
  const type = response.headers.get('content-type');
  let parsed: unknown = text;
  if (!content) {
    expect(text, `${label}: no body documented`).toBe('');
  } else {
    const mediaType = type?.split(';')[0]?.trim() ?? '';
    expect(Object.keys(content), `${label}: content type ${type}`).toContain(mediaType);
    if (mediaType.endsWith('json')) parsed = JSON.parse(text);
    if (content[mediaType]?.schema) {
      const validate = validator('paths', path, method.toLowerCase(), 'responses', status, 'content', mediaType, 'schema');
      expect(validate(parsed), `${label}: ${text.slice(0, 300)}\n${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  }
  for (const [name, header] of Object.entries((documented?.headers ?? {}) as Record<string, Json>)) {
    const value = response.headers.get(name);
    if (value === null) continue;
    const schema = resolve(header).schema as Json;
    const validate = ajv.compile(schema);
    const typed = schema.type === 'integer' ? Number(value) : value;
    expect(validate(typed), `${label}: header ${name}: ${value}`).toBe(true);
  }
  return { status: response.status, headers: response.headers, text, json: parsed as Json };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}, app = main) =>
  call({
    app,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const postForm = (path: string, params: Record<string, string>, app = main) =>
  call({
    app,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: String(new URLSearchParams(params)),
  });
const postText = (path: string, app = main) =>
  call({ app, method: 'POST', path, headers: { 'content-type': 'text/plain' }, body: 'hello' });
const huge = (kib: number) => JSON.stringify({ padding: 'x'.repeat(kib * 1024) });

async function register(app = main) {
  const { status, json } = await post('/agent/register', { type: 'anonymous', client_name: 'Contract test' }, {}, app);
  expect(status).toBe(201);
  return json as { client_id: string; identity_assertion: string; claim_token?: string };
}

async function codeMailedTo(to: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mail = smtp.received.filter((m) => m.envelope.to.includes(to)).at(-1);
    const code = /\b(\d{6})\b/.exec(mail?.parsed.text ?? '')?.[1];
    if (code) return code;
    if (Date.now() > deadline) throw new Error(`no code mailed to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('POST /api/contact (submitInquiry)', () => {
  it('200, with a replay, an attributed and a bad bearer token', async () => {
    const first = await post('/api/contact', validInquiry({ message: 'Contract: plain' }));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('100');
    const keyed = { 'idempotency-key': 'contract-key-1' };
    expect((await post('/api/contact', validInquiry({ message: 'Contract: keyed' }), keyed)).status).toBe(200);
    const replay = await post('/api/contact', validInquiry({ message: 'Contract: keyed' }), keyed);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const bad = await post('/api/contact', validInquiry({ message: 'Contract: bad token' }), { authorization: 'Bearer not.a.token' });
    expect(bad.status).toBe(200);
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const { access_token } = (await postForm('/oauth/token', { grant_type: JWT_BEARER, assertion: (await register()).identity_assertion }))
      .json as { access_token: string };
    const attributed = await post('/api/contact', validInquiry({ message: 'Contract: token' }), {
      authorization: `Bearer ${access_token}`,
    });
    expect(attributed.status).toBe(200);
    expect(attributed.headers.get('www-authenticate')).toBeNull();
    // The contact page's signals: a proof of work and the honeypot (a malformed proof is no error).
    const challenge = await call({ path: '/api/contact/challenge' });
    expect(challenge.status).toBe(200);
    const { header } = await solveProof(challenge.json as never);
    expect((await post('/api/contact', validInquiry({ message: 'Contract: proof' }), { altcha: header })).status).toBe(200);
    expect((await post('/api/contact', validInquiry({ message: 'Contract: trap' }), { altcha: '%', honeypot: 'filled' })).status).toBe(200);
  });

  it('400 for invalid fields, invalid JSON, an empty body and a malformed Idempotency-Key', async () => {
    const fields = await post('/api/contact', { firstName: '', email: 'nope', extra: 1 });
    expect(fields).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    expect((fields.json.errors as unknown[]).length).toBeGreaterThan(2);
    expect(await post('/api/contact', '{"firstName":')).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    expect(await post('/api/contact', '')).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    expect(await post('/api/contact', '[1]')).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    expect(await post('/api/contact', validInquiry(), { 'idempotency-key': 'has space' })).toMatchObject({
      status: 400,
      json: { error: 'invalid_idempotency_key' },
    });
  });

  it('413, 415 and 422', async () => {
    expect(await post('/api/contact', huge(65))).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect(await postText('/api/contact')).toMatchObject({ status: 415, json: { error: 'unsupported_media_type' } });
    const key = { 'idempotency-key': '"contract-key-2"' };
    expect((await post('/api/contact', validInquiry({ message: 'Contract: first body' }), key)).status).toBe(200);
    expect(await post('/api/contact', validInquiry({ message: 'Contract: other body' }), key)).toMatchObject({
      status: 422,
      json: { error: 'idempotency_key_reused' },
    });
  });

  it('429 past RATE_LIMIT_INQUIRIES, with Retry-After and RateLimit-*', async () => {
    expect((await post('/api/contact', validInquiry(), {}, limited)).status).toBe(200);
    const refused = await post('/api/contact', validInquiry({ message: 'again' }), {}, limited);
    expect(refused).toMatchObject({ status: 429, json: { error: 'rate_limited' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  });
});

describe('GET /api/contact/challenge (getProofOfWorkChallenge)', () => {
  it('200, and 429 past its limit per client address', async () => {
    expect((await call({ app: limited, path: '/api/contact/challenge' })).status).toBe(200);
    expect(await call({ app: limited, path: '/api/contact/challenge' })).toMatchObject({ status: 429, json: { error: 'rate_limited' } });
  });
});

describe('discovery, documentation and the website', () => {
  it('GET /api/health, the discovery documents, the API catalog, the server cards, /openapi.json and /auth.md answer 200', async () => {
    for (const path of [
      '/api/health',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/mcp/verified',
      '/.well-known/oauth-authorization-server',
      '/assets/consent.css',
      '/.well-known/jwks.json',
      '/.well-known/api-catalog',
      '/.well-known/mcp/server-card.json',
      '/mcp/server-card',
      '/.well-known/mcp/catalog.json',
      '/openapi.json',
      '/auth.md',
    ]) {
      expect((await call({ path })).status, path).toBe(200);
    }
    // Content negotiation, each type checked against its documented schema.
    const card = await call({ path: '/mcp/server-card', headers: { accept: 'application/mcp-server-card+json' } });
    expect(card.headers.get('content-type')).toMatch(/^application\/mcp-server-card\+json/);
    const receipt = await post('/api/contact', validInquiry({ message: 'a receipt, as documented' }), { accept: 'application/json' });
    expect(receipt).toMatchObject({ status: 200, json: { outcome: 'created', replayed: false } });
  });

  it('the pages and files answer 200, 304 to a matching If-None-Match, and 404 for an unknown file', async () => {
    const files = (path: string) =>
      (doc.paths[path]?.get?.parameters as Json[] | undefined)?.find((p) => p.name === 'file')?.schema as Json;
    // The proof-of-work worker's files, one path per folder.
    const powPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/assets/pow/'));
    expect(powPaths.length).toBeGreaterThan(0);
    const urls: [string, string][] = [
      ['/docs', '/docs'],
      ['/', '/'],
      ['/robots.txt', '/robots.txt'],
      ['/llms.txt', '/llms.txt'],
      ...(files('/docs/{file}').enum as string[]).map((f): [string, string] => ['/docs/{file}', `/docs/${f}`]),
      ...(files('/assets/{file}').enum as string[]).map((f): [string, string] => ['/assets/{file}', `/assets/${f}`]),
      ...powPaths.flatMap((path) => (files(path).enum as string[]).map((f): [string, string] => [path, path.replace('{file}', f)])),
    ];
    for (const [path, url] of urls) {
      const first = await call({ path, url });
      expect(first.status, url).toBe(200);
      const etag = first.headers.get('etag') ?? '';
      expect((await call({ path, url, headers: { 'if-none-match': etag } })).status, url).toBe(304);
    }
    expect((await call({ path: '/docs/{file}', url: '/docs/nope.css' })).status).toBe(404);
    const slash = await call({ path: '/docs/' });
    expect([slash.status, slash.headers.get('location')]).toEqual([301, '../docs']);
    expect((await call({ path: '/assets/{file}', url: '/assets/nope.css' })).status).toBe(404);
    for (const path of powPaths) expect((await call({ path, url: path.replace('{file}', 'nope.js') })).status, path).toBe(404);
  });

  it('an unknown path answers 404 problem+json as the Problem schema says', async () => {
    const response = await fetch(`${main.baseUrl}/no/such/path`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const validate = validator('components', 'schemas', 'Problem');
    expect(validate(await response.json())).toBe(true);
  });
});

describe('agent auth', () => {
  it('POST /agent/register: 201, 202, 400, 413, 415 and 429', async () => {
    const anonymous = await register();
    expect(anonymous.claim_token).toMatch(/^clm_/);
    const pending = await post('/agent/register', {
      type: 'identity_assertion',
      assertion_type: 'verified_email',
      email: 'owner@example.com',
      client_name: 'Owned agent',
    });
    expect(pending).toMatchObject({ status: 202, json: { status: 'pending' } });
    expect(await post('/agent/register', { type: 'robot' })).toMatchObject({ status: 400, json: { error: 'unsupported_identity_type' } });
    expect(await post('/agent/register', { type: 'anonymous' })).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    expect(await post('/agent/register', '{')).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    const idJag = { type: 'identity_assertion', assertion_type: 'urn:ietf:params:oauth:token-type:id-jag', assertion: 'a.b.c' };
    expect((await post('/agent/register', idJag)).status).toBe(400);
    expect(await post('/agent/register', huge(17))).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect(await postText('/agent/register')).toMatchObject({ status: 415, json: { error: 'unsupported_media_type' } });
    await register(limited);
    expect(await post('/agent/register', { type: 'anonymous', client_name: 'x' }, {}, limited)).toMatchObject({ status: 429 });
  });

  it('POST /agent/claim: 202, 200, 400, 401, 409, 410, 413, 415 and 429', async () => {
    const { claim_token } = await register();
    expect(await post('/agent/claim', { claim_token, email: 'person@example.com' })).toMatchObject({ status: 202 });
    const code = await codeMailedTo('person@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    expect(await post('/agent/claim', { claim_token, otp: wrong })).toMatchObject({ status: 401, json: { error: 'otp_invalid' } });
    expect(await post('/agent/claim', { claim_token, otp: code })).toMatchObject({ status: 200, json: { status: 'claimed' } });
    expect(await post('/agent/claim', { claim_token, otp: code })).toMatchObject({ status: 409, json: { error: 'previously_claimed' } });
    expect(await post('/agent/claim', { claim_token: 'clm_unknown', otp: '123456' })).toMatchObject({
      status: 401,
      json: { error: 'invalid_claim_token' },
    });
    expect(await post('/agent/claim', { claim_token, otp: '1' })).toMatchObject({ status: 400, json: { error: 'invalid_request' } });

    const ended = (await register()).claim_token as string;
    await post('/agent/claim', { claim_token: ended, email: 'guessed@example.com' });
    const endedCode = await codeMailedTo('guessed@example.com');
    const guess = endedCode === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) expect((await post('/agent/claim', { claim_token: ended, otp: guess })).status).toBe(401);
    expect(await post('/agent/claim', { claim_token: ended, otp: endedCode })).toMatchObject({
      status: 410,
      json: { error: 'claim_expired' },
    });

    expect((await post('/agent/claim', huge(17))).status).toBe(413);
    expect((await postText('/agent/claim')).status).toBe(415);
    expect((await post('/agent/claim', { claim_token: 'clm_x', otp: '123456' }, {}, limited)).status).toBe(401);
    expect((await post('/agent/claim', { claim_token: 'clm_x', otp: '123456' }, {}, limited)).status).toBe(429);
  });

  it('POST /oauth/token: 200 (form and JSON), 400 for each error and a body neither form nor JSON, 413 and 429', async () => {
    const { identity_assertion: assertion } = await register();
    expect(await postForm('/oauth/token', { grant_type: JWT_BEARER, assertion })).toMatchObject({
      status: 200,
      json: { token_type: 'Bearer' },
    });
    const exchange = { grant_type: TOKEN_EXCHANGE, subject_token: assertion, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' };
    expect(await post('/oauth/token', { ...exchange, resource: `${main.config.publicUrl}/mcp` })).toMatchObject({ status: 200 });
    for (const [params, error] of [
      [{ grant_type: JWT_BEARER, assertion: 'a.b.c' }, 'invalid_grant'],
      [{ grant_type: 'password' }, 'unsupported_grant_type'],
      [{}, 'invalid_request'],
      [{ grant_type: JWT_BEARER, assertion, scope: 'admin' }, 'invalid_scope'],
      [{ grant_type: JWT_BEARER, assertion, resource: 'https://elsewhere.example/' }, 'invalid_target'],
    ] as const) {
      expect(await postForm('/oauth/token', params), error).toMatchObject({ status: 400, json: { error } });
    }
    expect(await post('/oauth/token', huge(17))).toMatchObject({ status: 413 });
    expect(await postText('/oauth/token')).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    await postForm('/oauth/token', {}, limited);
    expect(await postForm('/oauth/token', {}, limited)).toMatchObject({ status: 429, json: { error: 'rate_limited' } });
  });

  it('POST /oauth/revoke: 200 (form and JSON), 400, 413 and 429', async () => {
    const { identity_assertion } = await register();
    expect((await postForm('/oauth/revoke', { token: identity_assertion })).status).toBe(200);
    expect((await post('/oauth/revoke', { token: 'unknown' })).status).toBe(200);
    expect(await postForm('/oauth/revoke', {})).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    expect((await post('/oauth/revoke', huge(17))).status).toBe(413);
    expect((await postText('/oauth/revoke')).status).toBe(400);
    await postForm('/oauth/revoke', { token: 'x' }, limited);
    expect((await postForm('/oauth/revoke', { token: 'x' }, limited)).status).toBe(429);
  });
});

/** An access token for `resource` of an agent whose person proved an address (a completed claim). */
async function personToken(resource: string, email: string): Promise<string> {
  const { claim_token } = await register();
  await post('/agent/claim', { claim_token, email });
  const claimed = await post('/agent/claim', { claim_token, otp: await codeMailedTo(email) });
  const assertion = (claimed.json as { identity_assertion: string }).identity_assertion;
  return ((await postForm('/oauth/token', { grant_type: JWT_BEARER, assertion, resource })).json as { access_token: string }).access_token;
}

describe('MCP', () => {
  let path = '/mcp';
  let signedIn: Record<string, string> = {};
  const rpc = (body: unknown, headers: Record<string, string> = { accept: MCP_ACCEPT }) => post(path, body, { ...signedIn, ...headers });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1.0.0' } },
  };

  it.each(['/mcp', '/mcp/verified'])('POST %s: 200, 202, 400 (JSON-RPC), 403, 406, 413 and 415', async (endpoint) => {
    path = endpoint;
    const token = endpoint === '/mcp' ? null : await personToken(`${main.config.publicUrl}${endpoint}`, 'signed-in@example.com');
    signedIn = token === null ? {} : { authorization: `Bearer ${token}` };
    expect(await rpc(initialize)).toMatchObject({
      status: 200,
      json: { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'studio-inquiry' } } },
    });
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'submit_inquiry', arguments: validInquiry({ message: 'via MCP' }) },
    };
    expect(await rpc(call)).toMatchObject({ status: 200, json: { result: { structuredContent: { reference: expect.any(String) } } } });
    expect(await rpc([{ jsonrpc: '2.0', id: 3, method: 'tools/list' }])).toMatchObject({ status: 200 });
    expect((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    expect(await rpc({ hello: 'world' })).toMatchObject({ status: 400, json: { jsonrpc: '2.0', error: { code: -32600 } } });
    const badVersion = await rpc(
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { accept: MCP_ACCEPT, 'mcp-protocol-version': '1999-01-01' },
    );
    expect(badVersion).toMatchObject({ status: 400, json: { error: { code: -32000 } } });
    expect(await rpc('{')).toMatchObject({ status: 400, json: { jsonrpc: '2.0', id: null, error: { code: -32700 } } });
    expect(await rpc(initialize, { accept: MCP_ACCEPT, origin: 'https://elsewhere.example' })).toMatchObject({
      status: 403,
      json: { error: 'origin_not_allowed' },
    });
    expect((await rpc(initialize, { accept: 'application/json' })).status).toBe(406);
    expect(await rpc(huge(129))).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    expect((await rpc('hello', { accept: MCP_ACCEPT, 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('POST /mcp/verified: 401 without a signed-in person, naming its resource metadata', async () => {
    path = '/mcp/verified';
    const metadata = `resource_metadata="${main.config.publicUrl}/.well-known/oauth-protected-resource/mcp/verified"`;
    signedIn = {};
    const none = await rpc(initialize);
    expect(none).toMatchObject({ status: 401, json: { error: 'sign_in_required' } });
    expect(none.headers.get('www-authenticate')).toBe(`Bearer ${metadata}`);
    // An anonymous agent's token is valid, but no person stands behind it.
    const { identity_assertion: assertion } = await register();
    const anonymous = await postForm('/oauth/token', {
      grant_type: JWT_BEARER,
      assertion,
      resource: `${main.config.publicUrl}/mcp/verified`,
    });
    signedIn = { authorization: `Bearer ${(anonymous.json as { access_token: string }).access_token}` };
    const refused = await rpc(initialize);
    expect(refused).toMatchObject({ status: 401, json: { error: 'sign_in_required' } });
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", ${metadata}`);
  });

  it('GET and DELETE /mcp and /api/contact: 405 with Allow: POST', async () => {
    for (const path of ['/mcp', '/mcp/verified', '/api/contact']) {
      for (const method of ['GET', 'DELETE'] as const) {
        const response = await call({ method, path });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('POST');
      }
    }
  });
});

describe('sign in with OAuth', () => {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const verifier = 'v'.repeat(43);
  const authorizeUrl = (clientId: string, extra: Record<string, string> = {}) =>
    `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st',
      ...extra,
    })}`;
  const consent = (form: Record<string, string>, cookie: string | null, app = main) =>
    call({
      app,
      method: 'POST',
      path: '/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie !== null && { cookie }) },
      body: String(new URLSearchParams(form)),
    });

  it('POST /oauth/register: 201, 400, 413 and 429', async () => {
    expect(await post('/oauth/register', { client_name: 'Host', redirect_uris: [redirectUri] })).toMatchObject({
      status: 201,
      json: { client_id: expect.stringMatching(/^mcp_/), token_endpoint_auth_method: 'none' },
    });
    expect(await post('/oauth/register', {})).toMatchObject({ status: 400, json: { error: 'invalid_client_metadata' } });
    expect(await post('/oauth/register', { redirect_uris: ['http://elsewhere.example/cb'] })).toMatchObject({ status: 400 });
    expect((await postText('/oauth/register')).status).toBe(400);
    expect((await post('/oauth/register', huge(17))).status).toBe(413);
    await post('/oauth/register', { redirect_uris: [redirectUri] }, {}, limited);
    expect(await post('/oauth/register', { redirect_uris: [redirectUri] }, {}, limited)).toMatchObject({ status: 429 });
  });

  it('GET and POST /oauth/authorize: the consent page (200), the way back (303), refusals (400), 413 and 429; then the code grant', async () => {
    const { client_id } = (await post('/oauth/register', { client_name: 'Host', redirect_uris: [redirectUri] })).json as {
      client_id: string;
    };
    const page = await call({ path: '/oauth/authorize', url: authorizeUrl(client_id) });
    expect(page.status).toBe(200);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const request = /name="request" value="([^"]+)"/.exec(page.text)?.[1] as string;
    expect(await consent({ request, action: 'send_code', email: 'signing-in@example.com' }, cookie)).toMatchObject({ status: 200 });
    const approved = await consent({ request, action: 'approve', otp: await codeMailedTo('signing-in@example.com') }, cookie);
    expect(approved.status).toBe(303);
    const code = new URL(approved.headers.get('location') as string).searchParams.get('code') as string;
    const tokens = await postForm('/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    expect(tokens).toMatchObject({ status: 200, json: { refresh_token: expect.stringMatching(/^rt_/) } });
    const refresh_token = (tokens.json as { refresh_token: string }).refresh_token;
    expect(await post('/oauth/token', { grant_type: 'refresh_token', refresh_token, client_id })).toMatchObject({ status: 200 });
    expect(await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token, client_id })).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    });

    expect((await call({ path: '/oauth/authorize', url: authorizeUrl(client_id, { response_type: 'token' }) })).status).toBe(303);
    expect((await call({ path: '/oauth/authorize', url: authorizeUrl('mcp_unknown') })).status).toBe(400);
    expect((await consent({ request, action: 'approve', otp: '123456' }, null)).status).toBe(400);
    expect((await consent({ request, padding: 'x'.repeat(17 * 1024) }, cookie)).status).toBe(413);
    for (const answers of [[400, 429]]) {
      const limitedGet = () => call({ app: limited, path: '/oauth/authorize', url: authorizeUrl('mcp_unknown') });
      expect([(await limitedGet()).status, (await limitedGet()).status]).toEqual(answers);
      expect([(await consent({ request }, null, limited)).status, (await consent({ request }, null, limited)).status]).toEqual(answers);
    }
  });
});

describe('when the store fails', () => {
  it('health answers 503; contact, agent auth and a bearer on /mcp answer 500', async () => {
    const { identity_assertion: assertion } = await register(broken);
    const token = await postForm('/oauth/token', { grant_type: JWT_BEARER, assertion, resource: `${broken.config.publicUrl}/mcp` }, broken);
    const mcpToken = (token.json as { access_token: string }).access_token;
    // A person's agent (as a completed claim leaves it), for /mcp/verified: broken sends no mail.
    const base = broken.config.publicUrl;
    const person = { clientUri: null, registrationType: 'verified_email', status: 'active', subject: null, issuer: null } as const;
    await broken.services.store.auth.createClient({
      ...person,
      clientId: 'agt_person',
      clientName: 'Person',
      email: 'p@example.com',
      createdAt: new Date(),
    });
    const personAssertion = await broken.services.keys.sign(
      { iss: base, aud: base, sub: 'agt_person', client_id: 'agt_person', jti: randomUUID() },
      { typ: 'JWT', expiresInSeconds: 600, now: new Date() },
    );
    const verifiedToken = await postForm(
      '/oauth/token',
      { grant_type: JWT_BEARER, assertion: personAssertion, resource: `${base}/mcp/verified` },
      broken,
    );
    const personToken = (verifiedToken.json as { access_token: string }).access_token;
    await broken.services.store.close();

    expect(await call({ app: broken, path: '/api/health' })).toMatchObject({ status: 503, json: { error: 'store_unavailable' } });
    const contact = await post('/api/contact', validInquiry(), {}, broken);
    expect(contact).toMatchObject({ status: 500, json: { error: 'inquiry_not_stored', requestId: expect.any(String) } });
    expect(await post('/agent/register', { type: 'anonymous', client_name: 'x' }, {}, broken)).toMatchObject({ status: 500 });
    expect(await post('/agent/claim', { claim_token: 'clm_x', otp: '123456' }, {}, broken)).toMatchObject({ status: 500 });
    expect(await postForm('/oauth/token', { grant_type: JWT_BEARER, assertion }, broken)).toMatchObject({
      status: 500,
      json: { error: 'server_error' },
    });
    expect(await postForm('/oauth/revoke', { token: assertion }, broken)).toMatchObject({ status: 500, json: { error: 'server_error' } });
    expect(await post('/oauth/register', { redirect_uris: ['http://127.0.0.1:1/cb'] }, {}, broken)).toMatchObject({
      status: 500,
      json: { error: 'server_error' },
    });
    const verified = await post(
      '/mcp/verified',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: MCP_ACCEPT, authorization: `Bearer ${personToken}` },
      broken,
    );
    expect(verified).toMatchObject({ status: 500, json: { error: 'internal_error' } });
    expect(
      await post(
        '/mcp',
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { accept: MCP_ACCEPT, authorization: `Bearer ${mcpToken}` },
        broken,
      ),
    ).toMatchObject({ status: 500, json: { error: 'internal_error' } });
  });
});

describe('coverage', () => {
  it('every documented operation was called, and answered every status documented for it', () => {
    const operations = Object.values(doc.paths).flatMap((item) =>
      ['get', 'post', 'delete'].flatMap((method) => (item[method] ? [item[method] as { operationId: string; responses: Json }] : [])),
    );
    const unseen = operations.flatMap(({ operationId, responses }) =>
      Object.keys(responses)
        .filter((status) => !seen.get(operationId)?.has(Number(status)))
        .map((status) => `${operationId} ${status}`),
    );
    expect(unseen).toEqual([]);
  });
});

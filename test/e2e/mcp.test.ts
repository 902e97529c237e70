// The MCP server through the official SDK client over a real socket: tools, their schemas, each
// call, validation errors an agent can act on, idempotency, bearer attribution, concurrency, Origin
// checks, JSON-RPC parse errors, the server card and the rate limit.

import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_MAX_BATCH } from '../../src/http/routes/mcp.js';
import { inquirySchema } from '../../src/inquiries/schema.js';
import { submitInquiryInputSchema } from '../../src/mcp/tools.js';
import { reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let testApp: TestApp;
let smtp: TestSmtpServer;
let base: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  // PUBLIC_URL must be the address clients use (CORS, issuer, resource): reserve it first.
  const reserved = await reserveBaseUrl();
  const port = reserved.port;
  base = reserved.base;
  testApp = await startTestApp({
    env: { PUBLIC_URL: base, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com', RATE_LIMIT_INQUIRIES: '1000/m' },
    listen: true,
    port,
  });
});
afterAll(async () => {
  await testApp?.close();
  await smtp.stop();
});

async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;

describe('tools', () => {
  it('lists the three tools with schemas and annotations', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['get_studio_info', 'list_services', 'submit_inquiry']);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    expect(tools.filter((tool) => tool.annotations?.readOnlyHint).map((tool) => tool.name)).toEqual(['get_studio_info', 'list_services']);
    const submit = tools.find((tool) => tool.name === 'submit_inquiry');
    expect(submit?.inputSchema.required).toEqual(['firstName', 'lastName', 'email', 'message']);
    expect(Object.keys(submit?.inputSchema.properties ?? {})).toEqual([
      'firstName',
      'lastName',
      'email',
      'company',
      'message',
      'idempotencyKey',
    ]);
    await client.close();
  });

  it("submit_inquiry's input schema is the HTTP endpoint's Inquiry schema, property for property", () => {
    for (const [name, schema] of Object.entries(inquirySchema.properties)) {
      expect(submitInquiryInputSchema.properties[name as keyof typeof inquirySchema.properties]).toBe(schema);
    }
    expect(submitInquiryInputSchema.required).toBe(inquirySchema.required);
  });

  it('get_studio_info and list_services answer from the studio profile, as structured content and the same text', async () => {
    const client = await connect();
    const info = await call(client, 'get_studio_info');
    expect(info.structuredContent).toMatchObject({
      name: testApp.profile.name,
      responseTime: '24 hours',
      links: { contactEndpoint: `${base}/api/contact`, openapi: `${base}/openapi.json`, authMd: `${base}/auth.md` },
    });
    expect(JSON.parse(info.content[0]?.text ?? '')).toEqual(info.structuredContent);
    const services = await call(client, 'list_services');
    expect(services.structuredContent?.services).toEqual(testApp.profile.services.map(({ name, description }) => ({ name, description })));
    // Their input schemas allow no arguments, and what is advertised is what is accepted.
    for (const tool of ['get_studio_info', 'list_services']) {
      const refused = await call(client, tool, { anything: 1 });
      expect(refused.isError).toBe(true);
      expect(refused.content[0]?.text).toBe(`${tool} takes no arguments; call it again without "anything".`);
    }
    await client.close();
  });

  it('submit_inquiry stores and delivers through the same service: the mail arrives', async () => {
    const client = await connect();
    const submitted = await call(client, 'submit_inquiry', validInquiry({ message: 'Sent over MCP' }));
    expect(submitted.isError).toBeFalsy();
    expect(submitted.structuredContent).toMatchObject({ reference: expect.stringMatching(/^INQ-/), responseTime: '24 hours' });
    const reference = String(submitted.structuredContent?.reference);
    const mails = await smtp.waitFor(1);
    expect(mails.some((mail) => mail.parsed.headers.get('x-inquiry-reference') === reference)).toBe(true);
    await client.close();
  });

  it('answers invalid input with a tool error naming each field, and stores nothing', async () => {
    const client = await connect();
    const before = (await testApp.services.store.inquiries.list({ limit: 1000 })).length;
    const failed = await call(client, 'submit_inquiry', { firstName: ' ', email: 'nope', message: 'x', extra: 1, 'a/b~c': 2 });
    expect(failed.isError).toBe(true);
    const text = failed.content[0]?.text ?? '';
    // Each argument named as it was sent (not as a JSON Pointer, where "a/b~c" is "a~1b~0c").
    for (const field of ['firstName', 'lastName', 'email', 'extra', 'a/b~c']) expect(text).toContain(`- ${field}:`);
    expect(text).toContain('call submit_inquiry again');
    expect((await testApp.services.store.inquiries.list({ limit: 1000 })).length).toBe(before);
    await client.close();
  });

  it('keeps one inquiry for one idempotencyKey, and refuses the key with other fields', async () => {
    const client = await connect();
    const args = validInquiry({ message: 'idempotent over MCP', idempotencyKey: 'mcp-key-1' });
    const first = await call(client, 'submit_inquiry', args);
    const again = await call(client, 'submit_inquiry', args);
    expect(again.structuredContent?.reference).toBe(first.structuredContent?.reference);
    expect([first.structuredContent?.outcome, again.structuredContent?.outcome]).toEqual(['created', 'created']);
    const other = await call(client, 'submit_inquiry', { ...args, message: 'something else' });
    expect(other.isError).toBe(true);
    // Named as the tool's argument is, not as the HTTP header.
    expect(other.content[0]?.text).toBe('This idempotencyKey was already used with different arguments. Use a new key for a new inquiry.');
    await client.close();
  });

  it('says when a call was folded into a recent identical inquiry, and a retry of that call says so too', async () => {
    const client = await connect();
    const first = await call(client, 'submit_inquiry', validInquiry({ message: 'folded over MCP', company: 'Typo Ltd' }));
    const corrected = validInquiry({ message: 'folded over MCP', company: 'Correct Ltd', idempotencyKey: 'mcp-folded-1' });
    const folded = await call(client, 'submit_inquiry', corrected);
    const retried = await call(client, 'submit_inquiry', corrected);
    for (const answer of [folded, retried]) {
      expect(answer.structuredContent).toMatchObject({ reference: first.structuredContent?.reference, outcome: 'duplicate' });
    }
    expect(first.structuredContent?.outcome).toBe('created');
    const stored = await testApp.services.store.inquiries.findByReference(String(first.structuredContent?.reference));
    expect(stored?.company).toBe('Typo Ltd');
    await client.close();
  });

  it('advertises the idempotencyKey rule in its input schema and accepts exactly the keys the schema accepts', async () => {
    const client = await connect();
    const submit = (await client.listTools()).tools.find((tool) => tool.name === 'submit_inquiry');
    // Checked as an agent would check its arguments before calling: with the advertised schema.
    const advertised = new Ajv2020({ strict: false }).compile(submit?.inputSchema.properties?.idempotencyKey as object);
    const keys = ['3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b', 'has space', '', '"quoted"', 'tab\tkey', 'clé', 'k'.repeat(255), 'k'.repeat(256)];
    for (const [index, key] of keys.entries()) {
      const answer = await call(client, 'submit_inquiry', validInquiry({ message: `key rule ${index}`, idempotencyKey: key }));
      expect({ key, accepted: !answer.isError }).toEqual({ key, accepted: advertised(key) });
      if (answer.isError) expect(answer.content[0]?.text).toMatch(/- idempotencyKey: must be 1-255 visible ASCII characters/);
    }
    expect(keys.filter((key) => advertised(key))).toEqual([keys[0], keys[6]]);
    await client.close();
  });

  it('attributes submissions to the client of a valid bearer token, and never loses one with a bad token', async () => {
    const registration = await testApp.services.auth.register({ type: 'anonymous', client_name: 'MCP agent' });
    const { access_token } = await testApp.services.auth.token({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: String(registration.body.identity_assertion),
      resource: `${base}/mcp`,
    });
    const client = await connect({ authorization: `Bearer ${access_token}` });
    const attributed = validInquiry({ message: 'attributed over MCP', idempotencyKey: 'mcp-attributed-1' });
    const submitted = await call(client, 'submit_inquiry', attributed);
    const stored = await testApp.services.store.inquiries.findByReference(String(submitted.structuredContent?.reference));
    expect(stored).toMatchObject({ clientId: registration.body.client_id, source: 'mcp' });
    expect(submitted.content).toHaveLength(1);
    await client.close();

    const bad = await connect({ authorization: 'Bearer not-a-token' });
    // A retry of that call, now with a bad token, answers for the call that sent it: no note.
    const replayed = await call(bad, 'submit_inquiry', attributed);
    expect(replayed.structuredContent?.reference).toBe(submitted.structuredContent?.reference);
    expect(replayed.content).toHaveLength(1);
    const anonymous = await call(bad, 'submit_inquiry', validInquiry({ message: 'bad token over MCP' }));
    expect(anonymous.isError).toBeFalsy();
    const storedAnonymous = await testApp.services.store.inquiries.findByReference(String(anonymous.structuredContent?.reference));
    expect(storedAnonymous?.clientId).toBeNull();
    // An MCP client does not read WWW-Authenticate on a 200: the result itself says what happened.
    expect(JSON.parse(anonymous.content[0]?.text ?? '')).toEqual(anonymous.structuredContent);
    expect(anonymous.content[1]?.text).toBe(
      'The inquiry was sent, but without your client id: the bearer token was not accepted (invalid, expired or revoked). ' +
        `To be named as its sender next time, get a new token (see ${base}/.well-known/oauth-protected-resource/mcp).`,
    );
    await bad.close();
  });

  it('serves two clients at once', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    if (!a || !b) throw new Error('no clients');
    const [ra, rb] = await Promise.all([
      call(a, 'submit_inquiry', validInquiry({ message: 'client A' })),
      call(b, 'submit_inquiry', validInquiry({ message: 'client B' })),
    ]);
    expect(ra.structuredContent?.reference).not.toBe(rb.structuredContent?.reference);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('the HTTP endpoint', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };

  it('refuses a browser origin that is not allowed with 403, and allows the allowed one and no Origin', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const evil = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: 'https://evil.example' },
      body: JSON.stringify(initialize),
    });
    expect(evil.status).toBe(403);
    // CORS_ORIGINS defaults to PUBLIC_URL's origin: the studio's own pages may call it.
    const own = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: new URL(base).origin },
      body: JSON.stringify(initialize),
    });
    expect(own.status).toBe(200);
    const none = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(none.status).toBe(200);
    // Refused before anything else is looked at: the body, its type, the method.
    for (const [method, type, body] of [
      ['POST', 'application/json', '{"jsonrpc":'],
      ['POST', 'text/plain', 'hello'],
      ['GET', undefined, undefined],
    ] as const) {
      const refused = await fetch(`${base}/mcp`, {
        method,
        headers: { accept: headers.accept, origin: 'https://evil.example', ...(type && { 'content-type': type }) },
        ...(body !== undefined && { body }),
      });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: 'origin_not_allowed' });
    }
  });

  it.each(['GET', 'DELETE', 'PUT', 'PATCH'])('answers %s with 405 and Allow: POST, whatever the body', async (method) => {
    const response = await fetch(`${base}/mcp`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    if (method !== 'GET') {
      for (const body of ['', '{"jsonrpc":']) {
        const withBody = await fetch(`${base}/mcp`, { method, headers: { 'content-type': 'application/json' }, body });
        expect(withBody.status).toBe(405);
        expect(await withBody.json()).toMatchObject({ error: 'method_not_allowed' });
      }
    }
  });

  it.each([
    ['a supported protocol version with that version', '2025-03-26', '2025-03-26'],
    ['another protocol version with the latest', '1999-01-01', LATEST_PROTOCOL_VERSION],
  ])('answers an initialize of %s, and names the server and its tools capability', async (_case, asked, answered) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ ...initialize, params: { ...initialize.params, protocolVersion: asked } }),
    });
    expect(await response.json()).toMatchObject({
      id: 1,
      result: {
        protocolVersion: answered,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'studio-inquiry', version: '1.0.0' },
        instructions: expect.stringContaining('submit_inquiry'),
      },
    });
  });

  it('answers an unsupported protocol version with 400', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(response.status).toBe(400);
  });

  it.each([
    ['malformed JSON', '{"jsonrpc": "2.0",'],
    ['an empty body', ''],
    ['a prototype-poisoning key', '{"jsonrpc":"2.0","id":1,"method":"tools/list","__proto__":{"polluted":true}}'],
    ['bytes that are not UTF-8', Buffer.from([...Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"'), 0xff, 0x22, 0x7d])],
  ])('answers %s with a JSON-RPC Parse error, with the security headers and the request id', async (_case, body) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    expect(response.status).toBe(400);
    // As the transport's own answers are typed.
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBeTruthy();
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error: /) },
    });
  });

  it.each([
    ['a null id', { jsonrpc: '2.0', id: null, method: 'tools/list' }, 'the body'],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, 'the body'],
    ['no jsonrpc member', { id: 1, method: 'tools/list' }, 'the body'],
    ['a number', 5, 'the body'],
    ['a batch holding a string', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'tools/list'], 'message 2 of the batch'],
  ])('answers JSON that is not a JSON-RPC message (%s) with 400 Invalid Request, running none of it', async (_case, body, which) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(new RegExp(`^Invalid Request: ${which} is not a JSON-RPC 2\\.0 message`)) },
    });
  });

  it.each([
    ['a tools/call without a tool name', 'tools/call', { arguments: {} }, /^Invalid params: params\.name: Invalid input: expected string/],
    ['a tools/call whose name is not a string', 'tools/call', { name: 5 }, /^Invalid params: params\.name: Invalid input: expected string/],
    [
      'a tools/call whose arguments are no object',
      'tools/call',
      { name: 'list_services', arguments: 'x' },
      /^Invalid params: params\.arguments: /,
    ],
    ['a tools/call without params', 'tools/call', undefined, /^Invalid params: params: Invalid input: expected object/],
    [
      'a tools/list with a cursor it was never given',
      'tools/list',
      { cursor: 'page-2' },
      /^Invalid params: params\.cursor: no such cursor/,
    ],
    [
      'a tools/list whose cursor is not a string',
      'tools/list',
      { cursor: 5 },
      /Invalid params: params\.cursor: Invalid input: expected string/,
    ],
    [
      'an initialize without a protocol version',
      'initialize',
      { capabilities: {}, clientInfo: { name: 'agent', version: '1' } },
      /Invalid params: params\.protocolVersion: Invalid input: expected string/,
    ],
    ['an initialize without params', 'initialize', undefined, /Invalid params: params: Invalid input: expected object/],
  ])('answers %s with Invalid params (-32602) naming the param, not with an internal error', async (_case, method, params, names) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    });
    const answer = (await response.json()) as { id: number; error: { code: number; message: string } };
    expect(answer).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(answer.error.message).toMatch(names);
    // One line an agent can read, not a dump of the validator's issues.
    expect(answer.error.message).not.toMatch(/[\n{[]/);
  });

  it('answers a tools/call with task metadata as a plain call: this server has no tasks, so it ignores them', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_services', task: { ttl: 1000 } } }),
    });
    const answer = (await response.json()) as { id: number; result: { structuredContent: { services: unknown[] } } };
    expect(answer.id).toBe(3);
    expect(answer.result.structuredContent.services.length).toBeGreaterThan(0);
  });

  it('answers a batch with an array even when it holds one request, and refuses two requests with one id, running none', async () => {
    const post = (body: unknown) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const lone = await post([{ jsonrpc: '2.0', id: 'only', method: 'ping' }]);
    expect(lone.status).toBe(200);
    expect(await lone.json()).toEqual([{ jsonrpc: '2.0', id: 'only', result: {} }]);
    const withNotification = await post([
      { jsonrpc: '2.0', id: 9, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    expect(await withNotification.json()).toEqual([{ jsonrpc: '2.0', id: 9, result: {} }]);
    // A batch cancelling its own request is answered all the same (a receiver MAY ignore a
    // cancellation); the SDK alone would have waited for the dropped answer for ever.
    const cancelled = await post([
      { jsonrpc: '2.0', id: 10, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 10 } },
    ]);
    expect(await cancelled.json()).toEqual([{ jsonrpc: '2.0', id: 10, result: {} }]);

    const submit = (email: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'submit_inquiry', arguments: validInquiry({ email }) },
    });
    const twice = await post([submit('same-id-1@example.com'), submit('same-id-2@example.com')]);
    expect(twice.status).toBe(400);
    expect(await twice.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('two requests with the id 1') },
    });
    const inquiries = await testApp.services.store.inquiries.list({ limit: 1000 });
    expect(inquiries.filter((inquiry) => inquiry.email.startsWith('same-id-'))).toEqual([]);
  });

  it(`answers a JSON-RPC batch of up to ${MCP_MAX_BATCH} messages, and refuses a longer one as an Invalid Request without running any`, async () => {
    const batch = (size: number, method = 'tools/list') =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(Array.from({ length: size }, (_, id) => ({ jsonrpc: '2.0', id, method, params: {} }))),
      });
    const allowed = await batch(MCP_MAX_BATCH);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const answers = (await allowed.json()) as { id: number; result: { tools: unknown[] } }[];
    expect(answers.map((answer) => [answer.id, answer.result.tools.length])).toEqual(
      Array.from({ length: MCP_MAX_BATCH }, (_, id) => [id, 3]),
    );
    const submits = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(
        Array.from({ length: MCP_MAX_BATCH + 1 }, (_, id) => ({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'submit_inquiry', arguments: validInquiry({ email: `batch-${id}@example.com` }) },
        })),
      ),
    });
    expect(submits.status).toBe(400);
    expect(submits.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await submits.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining(`at most ${MCP_MAX_BATCH} messages (this one holds ${MCP_MAX_BATCH + 1})`) },
    });
    const inquiries = await testApp.services.store.inquiries.list({ limit: 1000 });
    expect(inquiries.filter((inquiry) => inquiry.email.startsWith('batch-'))).toEqual([]);
    const empty = await batch(0);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('the batch is empty') },
    });
  });

  it('still answers a body too large (413) and one that is not JSON (415) with problem+json', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const large = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(129 * 1024) } }),
    });
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ error: 'payload_too_large' });
    const text = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: 'hello' });
    expect(text.status).toBe(415);
    expect(text.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(text.headers.get('x-request-id')).toBeTruthy();
  });

  it('serves the server card at both addresses, open and cacheable, as its own media type when asked', async () => {
    for (const path of ['/.well-known/mcp/server-card.json', '/mcp/server-card']) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('cache-control')).toMatch(/max-age=/);
      expect(response.headers.get('vary')).toMatch(/Accept/);
      const card = (await response.json()) as { name: string; description: string; tools: { name: string }[] };
      expect(card).toMatchObject({
        $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
        // The studio's website (https://northlight.example), reversed: a namespace a registry can verify.
        name: 'example.northlight/studio-inquiry',
        websiteUrl: 'https://northlight.example',
        remotes: [
          {
            type: 'streamable-http',
            url: `${base}/mcp`,
            supportedProtocolVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
            authentication: { required: false, schemes: ['bearer'] },
          },
          {
            type: 'streamable-http',
            url: `${base}/mcp/verified`,
            supportedProtocolVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
            authentication: { required: true, schemes: ['bearer'] },
          },
        ],
        serverInfo: { name: 'studio-inquiry', version: '1.0.0' },
        transport: { type: 'streamable-http', endpoint: '/mcp' },
        authentication: { required: false, schemes: ['bearer'] },
      });
      expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
      expect(card.description.length).toBeLessThanOrEqual(100);
      expect(card.tools.map((tool: { name: string }) => tool.name)).toEqual(['get_studio_info', 'list_services', 'submit_inquiry']);
      for (const accept of ['application/mcp-server-card+json', 'application/json, application/mcp-server-card+json']) {
        const typed = await fetch(`${base}${path}`, { headers: { accept } });
        expect(typed.headers.get('content-type')).toBe('application/mcp-server-card+json; charset=utf-8');
        expect(await typed.json()).toEqual(card);
      }
      const refused = await fetch(`${base}${path}`, { headers: { accept: 'application/mcp-server-card+json;q=0, application/json' } });
      expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it('lists the card in the MCP catalog at /.well-known/mcp/catalog.json', async () => {
    const response = await fetch(`${base}/.well-known/mcp/catalog.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({
      specVersion: 'draft',
      entries: [
        {
          identifier: 'example.northlight/studio-inquiry',
          displayName: 'Northlight Studio inquiries',
          mediaType: 'application/mcp-server-card+json',
          url: `${base}/.well-known/mcp/server-card.json`,
        },
      ],
    });
  });
});

describe('when the store fails', () => {
  it('answers submit_inquiry with a tool error saying nothing was stored and to try again, and leaks nothing', async () => {
    const failing = await startTestApp({ listen: true, startWorker: false });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${failing.baseUrl}/mcp`)));
      await failing.services.store.close();
      const refused = await call(client, 'submit_inquiry', validInquiry({ message: 'into a closed store' }));
      expect(refused).toEqual({
        isError: true,
        content: [{ type: 'text', text: 'The inquiry could not be stored and nothing was saved. Please try again in a moment.' }],
      });
      await client.close();
    } finally {
      await failing.close();
    }
  });
});

describe('rate limit', () => {
  it('answers submit_inquiry past RATE_LIMIT_INQUIRIES with a tool error giving the seconds to wait', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, listen: true, startWorker: false });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`)));
      expect((await call(client, 'submit_inquiry', validInquiry({ message: 'first' }))).isError).toBeFalsy();
      // An invalid call does not use the allowance up; it is told what to fix.
      expect((await call(client, 'submit_inquiry', { email: 'x' })).content[0]?.text).toContain('fix these fields');
      const limitedResult = await call(client, 'submit_inquiry', validInquiry({ message: 'second' }));
      expect(limitedResult.isError).toBe(true);
      const seconds = Number(/Retry after (\d+) seconds/.exec(limitedResult.content[0]?.text ?? '')?.[1]);
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(60);
      await client.close();
    } finally {
      await limited.close();
    }
  });

  it('gives a client one allowance for HTTP and MCP together (inquiries accepted per client IP)', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '2/m' }, listen: true, startWorker: false });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`)));
      const overHttp = (message: string) =>
        fetch(`${limited.baseUrl}/api/contact`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(validInquiry({ message })),
        });
      expect((await overHttp('one, over HTTP')).status).toBe(200);
      expect((await call(client, 'submit_inquiry', validInquiry({ message: 'two, over MCP' }))).isError).toBeFalsy();
      const refused = await call(client, 'submit_inquiry', validInquiry({ message: 'three, over MCP' }));
      expect(refused.content[0]?.text).toMatch(
        /^Rate limited: .*at most 2 per minute, over HTTP and MCP together\)\. Retry after \d+ seconds\.$/,
      );
      expect((await overHttp('three, over HTTP')).status).toBe(429);
      expect((await limited.services.store.inquiries.list({ limit: 10 })).length).toBe(2);
      await client.close();
    } finally {
      await limited.close();
    }
  });

  it('does not count a retry with an idempotencyKey already answered: it is replayed past the limit', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, listen: true, startWorker: false });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`)));
      const args = validInquiry({ message: 'lost response', idempotencyKey: 'mcp-retry-1' });
      const first = await call(client, 'submit_inquiry', args);
      expect(first.isError).toBeFalsy();
      // Answered from a read: even while another process holds the database's write lock.
      const other = new SQLite(join(limited.dir, 'studio.db'));
      other.exec('begin immediate');
      try {
        for (let i = 0; i < 3; i++) {
          const retry = await call(client, 'submit_inquiry', args);
          expect(retry.isError).toBeFalsy();
          expect(retry.structuredContent).toEqual({ ...first.structuredContent, replayed: true });
        }
        const conflict = await call(client, 'submit_inquiry', { ...args, message: 'another' });
        expect(conflict.content[0]?.text).toContain('already used with different arguments');
      } finally {
        other.exec('rollback');
        other.close();
      }
      const fresh = await call(client, 'submit_inquiry', validInquiry({ message: 'new', idempotencyKey: 'mcp-retry-2' }));
      expect(fresh.content[0]?.text).toMatch(/Retry after/);
      expect((await limited.services.store.inquiries.list({ limit: 10 })).length).toBe(1);
      await client.close();
    } finally {
      await limited.close();
    }
  });

  it('does not count a call with a malformed idempotencyKey, and names the argument and its rule', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_INQUIRIES: '1/m' }, listen: true, startWorker: false });
    try {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`)));
      for (const idempotencyKey of ['has space', '', 42]) {
        const refused = await call(client, 'submit_inquiry', validInquiry({ message: 'bad key', idempotencyKey }));
        expect(refused.isError).toBe(true);
        const text = refused.content[0]?.text ?? '';
        expect(text).toContain('fix these fields');
        expect(text).toContain('- idempotencyKey: must be 1-255 visible ASCII characters');
        expect(text).not.toContain('Idempotency-Key');
      }
      expect((await limited.services.store.inquiries.list({ limit: 10 })).length).toBe(0);
      const accepted = await call(client, 'submit_inquiry', validInquiry({ message: 'good key', idempotencyKey: 'good-key-1' }));
      expect(accepted.isError).toBeFalsy();
      expect((await call(client, 'submit_inquiry', validInquiry({ message: 'over the limit' }))).content[0]?.text).toMatch(/Retry after/);
      await client.close();
    } finally {
      await limited.close();
    }
  });
});

// POST /mcp in process (app.inject), answers compared byte for byte: the JSON-RPC errors this server
// words itself (Invalid params naming the param, Method not found) and a tool error result, alone
// and in a batch, so that a change of how the server sits on the MCP SDK cannot change the wire.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
beforeAll(async () => {
  testApp = await startTestApp({ startWorker: false });
});
afterAll(async () => {
  await testApp?.close();
});

const post = async (body: unknown) => {
  const response = await testApp.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify(body),
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  return response.body;
};

const call = (id: number, params: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

const invalidName =
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params.name: Invalid input: expected string, received number"}}';
const methodNotFound = '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}';
const noArguments =
  '{"result":{"isError":true,"content":[{"type":"text","text":"list_services takes no arguments; call it again without \\"x\\"."}]},"jsonrpc":"2.0","id":3}';

describe('POST /mcp answers, byte for byte', () => {
  it("a tools/call with a bad param: -32602 naming the param, not the SDK's own wording", async () => {
    expect(await post(call(1, { name: 5 }))).toBe(invalidName);
    expect(await post(call(1, { name: 'list_services', arguments: 'x' }))).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params.arguments: Invalid input: expected record, received string"}}',
    );
    expect(await post(call(1, undefined))).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params: Invalid input: expected object, received undefined"}}',
    );
  });

  it('a tools/call of a tool that does not exist: -32602 listing the tools', async () => {
    expect(await post(call(1, { name: 'nope' }))).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool \\"nope\\"; the tools are get_studio_info, list_services, submit_inquiry"}}',
    );
  });

  it('a method this server does not have: -32601', async () => {
    expect(await post({ jsonrpc: '2.0', id: 2, method: 'resources/list' })).toBe(methodNotFound);
    expect(await post({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } })).toBe(methodNotFound);
  });

  it('a tool error: a result with isError first, as the tool returned it', async () => {
    expect(await post(call(3, { name: 'list_services', arguments: { x: 1 } }))).toBe(noArguments);
  });

  it('a batch of them: each answer in the order of its request', async () => {
    const batch = [
      call(1, { name: 5 }),
      { jsonrpc: '2.0', id: 2, method: 'prompts/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call(3, { name: 'list_services', arguments: { x: 1 } }),
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    ];
    expect(await post(batch)).toBe(`[${invalidName},${methodNotFound},${noArguments},{"result":{},"jsonrpc":"2.0","id":4}]`);
  });
});

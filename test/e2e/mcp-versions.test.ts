// /mcp across protocol versions over a real socket: the v2 SDK client on 2026-07-28 (stateless,
// server/discover, per-request _meta), the v1 client on 2025-11-25, initialize for each 2025
// version, and JSON-RPC batches only where the version has them (2025-03-26).
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PROTOCOL_VERSIONS } from '../../src/mcp/versions.js';
import { reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';

let testApp: TestApp;
beforeAll(async () => {
  // PUBLIC_URL must be the address clients use (the tokens' audience): reserve it first.
  const { port, base } = await reserveBaseUrl();
  testApp = await startTestApp({ env: { PUBLIC_URL: base, RATE_LIMIT_INQUIRIES: '1000/m' }, listen: true, port, startWorker: false });
});
afterAll(async () => {
  await testApp?.close();
});

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

async function modernClient(headers: Record<string, string> = {}) {
  const client = new ModernClient({ name: 'modern-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(`${testApp.baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

async function legacyClient() {
  const client = new LegacyClient({ name: 'legacy-agent', version: '1.0.0' });
  const transport = new LegacyTransport(new URL(`${testApp.baseUrl}/mcp`));
  await client.connect(transport);
  return Object.assign(client, { negotiated: transport.protocolVersion });
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${testApp.baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe('the v2 client on 2026-07-28', () => {
  it('connects without initialize, and lists the same tools as the v1 client on 2025-11-25', async () => {
    const modern = await modernClient();
    const legacy = await legacyClient();
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(legacy.negotiated).toBe('2025-11-25');
    const [modernTools, legacyTools] = await Promise.all([modern.listTools(), legacy.listTools()]);
    expect(modernTools.tools.map((tool) => tool.name)).toEqual(['get_studio_info', 'list_services', 'submit_inquiry']);
    expect(
      modernTools.tools.map(({ name, inputSchema, outputSchema, annotations }) => ({ name, inputSchema, outputSchema, annotations })),
    ).toEqual(
      legacyTools.tools.map(({ name, inputSchema, outputSchema, annotations }) => ({ name, inputSchema, outputSchema, annotations })),
    );
    await Promise.all([modern.close(), legacy.close()]);
  });

  it('negotiates 2026-07-28 on its own (server/discover) when left to choose', async () => {
    const client = new ModernClient({ name: 'auto-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(`${testApp.baseUrl}/mcp`)));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(client.getInstructions()).toContain('submit_inquiry');
    await client.close();
  });

  it('calls each tool as the v1 client does: the same answers, the same tool errors, the same receipt', async () => {
    const modern = await modernClient();
    const legacy = await legacyClient();
    const info = (await modern.callTool({ name: 'get_studio_info', arguments: {} })) as ToolResult;
    expect(info.structuredContent).toEqual(
      ((await legacy.callTool({ name: 'get_studio_info', arguments: {} })) as ToolResult).structuredContent,
    );
    const refused = (await modern.callTool({ name: 'list_services', arguments: { x: 1 } })) as ToolResult;
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'list_services takes no arguments; call it again without "x".' }],
    });
    const invalid = (await modern.callTool({ name: 'submit_inquiry', arguments: { firstName: ' ', email: 'nope' } })) as ToolResult;
    expect(invalid.isError).toBe(true);
    for (const field of ['firstName', 'lastName', 'email', 'message']) expect(invalid.content[0]?.text).toContain(`- ${field}:`);
    await expect(modern.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool "nope"/);

    const args = validInquiry({ message: 'over 2026-07-28', idempotencyKey: 'modern-1' });
    const sent = (await modern.callTool({ name: 'submit_inquiry', arguments: args })) as ToolResult;
    expect(sent.structuredContent).toMatchObject({
      reference: expect.stringMatching(/^INQ-/),
      outcome: 'created',
      replayed: false,
      attribution: { client_id: null, reason: 'no_token' },
    });
    // The same key over the other version replays the same inquiry: one service behind both.
    const replayed = (await legacy.callTool({ name: 'submit_inquiry', arguments: args })) as ToolResult;
    expect(replayed.structuredContent).toEqual({ ...sent.structuredContent, replayed: true });
    await Promise.all([modern.close(), legacy.close()]);
  });

  it("attributes a call to its bearer token's client, per request, and says why when a token is not accepted", async () => {
    const registration = await testApp.services.auth.register({ type: 'anonymous', client_name: 'Modern agent' });
    const { access_token } = await testApp.services.auth.token({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: String(registration.body.identity_assertion),
      resource: `${testApp.baseUrl}/mcp`,
    });
    const client = await modernClient({ authorization: `Bearer ${access_token}` });
    const sent = (await client.callTool({
      name: 'submit_inquiry',
      arguments: validInquiry({ message: 'attributed, 2026' }),
    })) as ToolResult;
    expect(sent.structuredContent?.attribution).toEqual({ client_id: registration.body.client_id, reason: null });
    const stored = await testApp.services.store.inquiries.findByReference(String(sent.structuredContent?.reference));
    expect(stored?.clientId).toBe(registration.body.client_id);
    await client.close();

    const bad = await modernClient({ authorization: 'Bearer not-a-token' });
    const anonymous = (await bad.callTool({
      name: 'submit_inquiry',
      arguments: validInquiry({ message: 'bad token, 2026' }),
    })) as ToolResult;
    expect(anonymous.structuredContent?.attribution).toEqual({
      client_id: null,
      reason: 'invalid_token',
      detail: expect.stringContaining(`${testApp.baseUrl}/.well-known/oauth-protected-resource/mcp`),
    });
    const attribution = anonymous.structuredContent?.attribution as { detail?: string } | undefined;
    expect(anonymous.content[1]?.text).toBe(attribution?.detail);
    await bad.close();
  });
});

describe('the 2025 versions', () => {
  const initialize = (protocolVersion: string, id: number | string = 1) => ({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-agent', version: '1' } },
  });

  it.each(MCP_PROTOCOL_VERSIONS.filter((version) => version !== '2026-07-28'))(
    'answers an initialize of %s with that version, and a tools/list that names it in MCP-Protocol-Version',
    async (version) => {
      const init = await post(initialize(version));
      expect(await init.json()).toMatchObject({ id: 1, result: { protocolVersion: version, serverInfo: { name: 'studio-inquiry' } } });
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': version });
      expect(list.status).toBe(200);
      expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(3);
    },
  );

  it('answers an initialize asking for 2026-07-28 (which has no initialize) or an unknown version with the newest 2025 one', async () => {
    for (const asked of ['2026-07-28', '2024-11-05']) {
      expect(await (await post(initialize(asked))).json()).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
    }
  });

  it('takes batches under 2025-03-26 (named, or no header at all) and refuses them under the later versions', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    const unnamedOrNamed: Record<string, string>[] = [{}, { 'mcp-protocol-version': '2025-03-26' }];
    for (const headers of unnamedOrNamed) {
      const answered = await post(batch, headers);
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as { id: number }[]).map((answer) => answer.id)).toEqual([1, 2]);
    }
    for (const version of ['2025-06-18', '2025-11-25', '2026-07-28']) {
      const refused = await post(batch, { 'mcp-protocol-version': version });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: MCP ${version} has no JSON-RPC batches (only 2025-03-26 has); send one message per request.`,
        },
      });
    }
  });

  it('refuses [initialize, tools/list] as the spec does (initialize must not be batched), running none of it', async () => {
    const refused = await post([initialize('2025-03-26'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
    expect(refused.status).toBe(400);
    const { error } = (await refused.json()) as { error: { code: number; message: string } };
    expect(error.code).toBe(-32600);
    expect(error.message).toContain('initialize must not be part of a JSON-RPC batch (MCP 2025-03-26, Lifecycle)');
    expect(error.message).not.toContain('Only one initialization request');
  });
});

// The MCP side of the OpenAPI document: POST /mcp and /mcp/verified (streamable HTTP, stateless,
// JSON responses) with the JSON-RPC envelope and the tools' argument schemas taken from
// src/mcp/tools.ts, their other methods (405), the server card at both addresses and the MCP catalog.
import { MCP_BODY_LIMIT_BYTES, MCP_MAX_BATCH, NOT_JSON_MESSAGE, notJsonRpcMessage, SIGN_IN_REQUIRED } from '../http/routes/mcp.js';
import { MCP_CATALOG_PATH, mcpCatalog, SERVER_CARD_MEDIA_TYPE, serverCard } from '../mcp/server-card.js';
import { TOOLS } from '../mcp/tools.js';
import { MCP_PROTOCOL_VERSIONS } from '../mcp/versions.js';
import {
  type Area,
  type AreaContext,
  example,
  headerRef,
  INTERNAL_ERROR,
  JSON_TYPE,
  type Json,
  type Operation,
  PUBLIC_HEADERS,
  parameterRef,
  problemResponse,
  ref,
} from './common.js';

const LIMIT_KIB = MCP_BODY_LIMIT_BYTES / 1024;
const id = { type: ['string', 'integer'] } as const;

const jsonRpcSchemas: Record<string, Json> = {
  JsonRpcRequest: {
    type: 'object',
    required: ['jsonrpc', 'id', 'method'],
    properties: { jsonrpc: { const: '2.0' }, id, method: { type: 'string' }, params: { type: 'object' } },
  },
  JsonRpcNotification: {
    type: 'object',
    required: ['jsonrpc', 'method'],
    not: { required: ['id'] },
    properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' }, params: { type: 'object' } },
  },
  JsonRpcResult: {
    type: 'object',
    required: ['jsonrpc', 'id', 'result'],
    properties: { jsonrpc: { const: '2.0' }, id, result: { type: 'object' } },
  },
  JsonRpcError: {
    type: 'object',
    required: ['jsonrpc', 'id', 'error'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer', 'null'] },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'integer', examples: [-32000] }, message: { type: 'string' }, data: {} },
      },
    },
  },
  McpToolsCallRequest: {
    description: 'A `tools/call` request.',
    allOf: [{ $ref: '#/components/schemas/JsonRpcRequest' }],
    properties: { method: { const: 'tools/call' }, params: { $ref: '#/components/schemas/McpToolCallParams' } },
  },
  McpToolCallParams: {
    description: 'The `params` of a `tools/call` request: one of the tools with its arguments (the schemas the server lists).',
    oneOf: TOOLS.map((tool) => ({
      type: 'object',
      required: ['name'],
      properties: { name: { const: tool.name, description: tool.description }, arguments: tool.inputSchema },
    })),
  },
  McpServerCard: {
    type: 'object',
    description:
      'The server-card draft (SEP-2127) fields plus the earlier serverInfo/transport/authentication ones. The name is the ' +
      "studio website's host reversed (PUBLIC_URL's when the website names no domain), then /studio-inquiry.",
    required: ['name', 'version', 'description', 'remotes', 'serverInfo', 'transport', 'capabilities', 'tools', 'authentication'],
    properties: {
      $schema: { type: 'string', format: 'uri' },
      name: { type: 'string', pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$' },
      version: { type: 'string' },
      title: { type: 'string' },
      description: { type: 'string', maxLength: 100 },
      websiteUrl: { type: 'string', format: 'uri' },
      remotes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['type', 'url', 'supportedProtocolVersions'],
          properties: {
            type: { const: 'streamable-http' },
            url: { type: 'string', format: 'uri' },
            supportedProtocolVersions: { type: 'array', items: { enum: [...MCP_PROTOCOL_VERSIONS] } },
            authentication: { $ref: '#/components/schemas/McpServerCardAuthentication' },
          },
        },
      },
      serverInfo: { type: 'object', required: ['name', 'version'], properties: { name: { type: 'string' }, version: { type: 'string' } } },
      transport: {
        type: 'object',
        required: ['type', 'endpoint'],
        properties: {
          type: { const: 'streamable-http' },
          endpoint: {
            type: 'string',
            pattern: '^(/[^/]+)*/mcp$',
            description: "The endpoint's path on the host: PUBLIC_URL's path, then /mcp.",
          },
        },
      },
      capabilities: { type: 'object' },
      tools: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'description'],
          properties: { name: { type: 'string' }, description: { type: 'string' } },
        },
      },
      authentication: { $ref: '#/components/schemas/McpServerCardAuthentication' },
    },
  },
  McpServerCardAuthentication: {
    type: 'object',
    required: ['required', 'schemes'],
    description: '`required`: true for /mcp/verified (a person signed in with OAuth), false for /mcp and the card as a whole.',
    properties: { required: { type: 'boolean' }, schemes: { type: 'array', items: { const: 'bearer' } } },
  },
  McpCatalog: {
    type: 'object',
    description: "The domain's MCP servers (the server-card draft's catalog): this one's card.",
    required: ['specVersion', 'entries'],
    properties: {
      specVersion: { const: 'draft' },
      entries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['identifier', 'displayName', 'mediaType', 'url'],
          properties: {
            identifier: { type: 'string', description: "The card's name." },
            displayName: { type: 'string' },
            mediaType: { const: SERVER_CARD_MEDIA_TYPE },
            url: { type: 'string', format: 'uri' },
          },
        },
      },
    },
  },
};

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'my-agent', version: '1.0.0' } },
};

const jsonRpcError = (message: string, code = -32000) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

export function mcpArea({ config, profile, urls }: AreaContext): Area {
  const card = serverCard(config.publicUrl, profile);
  const cardUrl = `${config.publicUrl}/.well-known/mcp/server-card.json`;
  const [, , submitTool] = TOOLS;
  const callMcp: Operation = {
    operationId: 'callMcp',
    summary: 'Send MCP JSON-RPC messages',
    description:
      `The MCP tool server (streamable HTTP transport, stateless: no session, no SSE stream; every answer is JSON), ` +
      `protocol versions ${MCP_PROTOCOL_VERSIONS.join(', ')}: 2026-07-28 without initialize (server/discover, the version and ` +
      "client in each request's `_meta`, and the MCP-Protocol-Version and Mcp-Method headers), the 2025 ones after initialize. " +
      `Tools: ${TOOLS.map((tool) => `\`${tool.name}\``).join(', ')} — see the server card at ${cardUrl} and \`tools/list\`. ` +
      'Send `Accept: application/json, text/event-stream`. Invalid tool arguments and rate limiting are tool results with ' +
      '`isError: true` (status 200) that say what to fix. A browser `Origin` outside CORS_ORIGINS is refused (DNS-rebinding ' +
      `protection). A bearer token for the resource ${urls.mcpResource} attributes submissions; a bad one never loses the inquiry.`,
    externalDocs: { description: 'MCP server card', url: cardUrl },
    tags: ['MCP'],
    security: [{}, { bearer: [] }],
    parameters: [parameterRef('MCP-Protocol-Version')],
    requestBody: {
      required: true,
      description: `One JSON-RPC message, or a batch under 2025-03-26 only (MCP-Protocol-Version 2025-03-26 or none), at most ${LIMIT_KIB} KiB.`,
      content: {
        [JSON_TYPE]: {
          schema: {
            anyOf: [
              { anyOf: [ref('McpToolsCallRequest'), ref('JsonRpcRequest'), ref('JsonRpcNotification')] },
              { type: 'array', minItems: 1, items: { anyOf: [ref('JsonRpcRequest'), ref('JsonRpcNotification')] } },
            ],
          },
          examples: {
            initialize: example('initialize', INITIALIZE),
            listTools: example('tools/list', { jsonrpc: '2.0', id: 2, method: 'tools/list' }),
            submitInquiry: example('tools/call submit_inquiry', {
              jsonrpc: '2.0',
              id: 3,
              method: 'tools/call',
              params: {
                name: submitTool.name,
                arguments: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', message: 'A new website, please.' },
              },
            }),
          },
        },
      },
    },
    responses: {
      200: {
        description: 'The JSON-RPC response(s) to the request(s) sent.',
        headers: { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
        content: {
          [JSON_TYPE]: {
            schema: {
              anyOf: [
                { anyOf: [ref('JsonRpcResult'), ref('JsonRpcError')] },
                { type: 'array', items: { anyOf: [ref('JsonRpcResult'), ref('JsonRpcError')] } },
              ],
            },
          },
        },
      },
      202: { description: 'Only notifications or responses were sent: accepted, no body.' },
      400: {
        description:
          'A JSON-RPC error with id null, and none of the request runs: a body that is not JSON (malformed, empty, not UTF-8, ' +
          'or with a `__proto__` key) is a Parse error (-32700); JSON that is not a JSON-RPC message, or a batch that is empty ' +
          `or holds more than ${MCP_MAX_BATCH} messages or an initialize, or a batch under a version after 2025-03-26, is an ` +
          'Invalid Request (-32600); an unsupported MCP-Protocol-Version is -32000.',
        content: {
          [JSON_TYPE]: {
            schema: ref('JsonRpcError'),
            examples: {
              notJson: example('Not JSON', jsonRpcError(NOT_JSON_MESSAGE, -32700)),
              invalid: example('Not JSON-RPC', jsonRpcError(notJsonRpcMessage('the body'), -32600)),
            },
          },
        },
      },
      403: problemResponse(403, 'A browser Origin outside CORS_ORIGINS.', [
        { error: 'origin_not_allowed', detail: 'Origin https://elsewhere.example may not call this MCP server.' },
      ]),
      406: {
        description: 'The Accept header does not list both application/json and text/event-stream.',
        content: {
          [JSON_TYPE]: {
            schema: ref('JsonRpcError'),
            examples: {
              notAcceptable: example(
                'Not acceptable',
                jsonRpcError('Not Acceptable: Client must accept both application/json and text/event-stream'),
              ),
            },
          },
        },
      },
      413: problemResponse(413, `The body is larger than ${LIMIT_KIB} KiB.`, [
        { error: 'payload_too_large', detail: `The request body is larger than ${LIMIT_KIB} KiB.` },
      ]),
      415: problemResponse(415, 'The body is not application/json, or is JSON in a charset other than UTF-8.', [
        { error: 'unsupported_media_type', detail: 'Send the request body as JSON with Content-Type: application/json.' },
      ]),
      500: problemResponse(500, 'The request failed on the service side.', [INTERNAL_ERROR]),
    },
  };
  const callMcpVerified: Operation = {
    ...callMcp,
    operationId: 'callMcpVerified',
    summary: 'Send MCP JSON-RPC messages as a signed-in person',
    description:
      'The same tools as POST /mcp, for an agent whose person signed in with OAuth (the authorization-code flow, docs/agent-auth.md): ' +
      `an access token for the resource ${urls.mcpVerifiedResource} that carries a verified email. Without one the answer is 401, ` +
      'before the body is read, and its WWW-Authenticate names this resource’s metadata, where a standard MCP client learns to sign in. ' +
      'Its inquiries are attributed to that person.',
    security: [{ bearer: [] }],
    responses: {
      ...callMcp.responses,
      401: problemResponse(
        401,
        'No access token of a signed-in person for this resource (none, invalid, expired, revoked, or an agent with no verified email).',
        [{ error: 'sign_in_required', detail: SIGN_IN_REQUIRED }],
        { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
      ),
    },
  };
  const notAllowed = (method: 'GET' | 'DELETE' | 'PUT' | 'PATCH', path = '/mcp'): Operation => ({
    operationId: `${{ GET: 'getMcpStream', DELETE: 'deleteMcpSession', PUT: 'putMcp', PATCH: 'patchMcp' }[method]}${path === '/mcp' ? '' : 'Verified'}`,
    summary: `${method} ${path}: not allowed (stateless server)`,
    description:
      'This MCP server is stateless: there is no stream to resume (GET), no session to end (DELETE) and nothing else to do here. Use POST.',
    tags: ['MCP'],
    responses: {
      405: problemResponse(
        405,
        'Always: send JSON-RPC with POST.',
        [{ error: 'method_not_allowed', detail: 'This MCP server is stateless: send JSON-RPC with POST.' }],
        { Allow: headerRef('Allow') },
      ),
    },
  });
  const cardGet = (operationId: string, summary: string): Json => ({
    get: {
      operationId,
      summary,
      description:
        'Who the MCP server is, where it is, the protocol versions it speaks, its tools and how it authenticates. Public, ' +
        `readable from any origin, cacheable. Served as ${SERVER_CARD_MEDIA_TYPE} when the Accept header names it, JSON otherwise.`,
      tags: ['MCP'],
      responses: {
        200: {
          description: 'The server card.',
          headers: PUBLIC_HEADERS,
          content: {
            [JSON_TYPE]: { schema: ref('McpServerCard'), examples: { served: example('As this service serves it', card) } },
            [SERVER_CARD_MEDIA_TYPE]: { schema: ref('McpServerCard') },
          },
        },
      },
    },
  });
  return {
    paths: {
      '/mcp': {
        post: callMcp,
        get: notAllowed('GET'),
        delete: notAllowed('DELETE'),
        put: notAllowed('PUT'),
        patch: notAllowed('PATCH'),
      },
      '/mcp/verified': {
        post: callMcpVerified,
        get: notAllowed('GET', '/mcp/verified'),
        delete: notAllowed('DELETE', '/mcp/verified'),
        put: notAllowed('PUT', '/mcp/verified'),
        patch: notAllowed('PATCH', '/mcp/verified'),
      },
      '/.well-known/mcp/server-card.json': cardGet('getMcpServerCard', 'MCP server card'),
      '/mcp/server-card': cardGet('getMcpServerCardAlias', 'MCP server card (alternative address)'),
      [MCP_CATALOG_PATH]: {
        get: {
          operationId: 'getMcpCatalog',
          summary: 'MCP catalog',
          description: "The domain's MCP servers: one entry, this server's card. Public, readable from any origin, cacheable.",
          tags: ['MCP'],
          responses: {
            200: {
              description: 'The catalog.',
              headers: PUBLIC_HEADERS,
              content: {
                [JSON_TYPE]: {
                  schema: ref('McpCatalog'),
                  examples: { served: example('As this service serves it', mcpCatalog(config.publicUrl, profile)) },
                },
              },
            },
          },
        },
      },
    },
    schemas: jsonRpcSchemas,
  };
}

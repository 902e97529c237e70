// The MCP tool server: a fresh low-level Server per HTTP request (stateless), whose tools call the
// same inquiry service as POST /api/contact. Tool errors are results with isError: true that say
// what to fix, so an agent can correct its call and retry.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpContext } from './context.js';
import { anyParams, invalidParams, methodNotFound, validParams } from './json-rpc.js';
import { toolError, toolResult } from './results.js';
import { submitInquiry } from './submit-inquiry.js';
import { TOOLS } from './tools.js';

export const MCP_SERVER_NAME = 'studio-inquiry';
export const MCP_SERVER_VERSION = '1.0.0';

export function buildMcpServer(context: McpContext): Server {
  const serverInfo = { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: `${context.profile.name} inquiries` };
  const instructions = `Tools of ${context.profile.name}: look the studio up, then send a project inquiry with submit_inquiry. No sign-in is needed.`;
  const capabilities = { tools: { listChanged: false } };
  const server = new Server(serverInfo, { capabilities, instructions });
  // The SDK's own initialize, but with bad params answered -32602 (see anyParams). Each request has
  // a server of its own (stateless), so nothing of the client's is kept.
  server.setRequestHandler(anyParams(InitializeRequestSchema), async (request) => {
    const { params } = validParams(InitializeRequestSchema, request);
    const supported = SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion);
    return {
      protocolVersion: supported ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
      capabilities,
      serverInfo,
      instructions,
    };
  });
  server.setRequestHandler(anyParams(ListToolsRequestSchema), async (request) => {
    const { params } = validParams(ListToolsRequestSchema, request);
    // MCP Pagination: every tool is in the first page, so no cursor was ever handed out.
    if (params?.cursor !== undefined)
      throw invalidParams('Invalid params: params.cursor: no such cursor; every tool is in the first page.');
    return { tools: TOOLS.map((tool) => ({ ...tool })) };
  });
  // tools/call goes to the fallback handler, which gets the request as sent: Server wraps a tools/call
  // handler set with setRequestHandler, answering bad params with its list of validator issues and
  // re-parsing the result (which reorders its keys). Any other method has no handler.
  server.fallbackRequestHandler = async (request) => {
    if (request.method !== 'tools/call') throw methodNotFound();
    return callTool(context, validParams(CallToolRequestSchema, request).params);
  };
  return server;
}

async function callTool(context: McpContext, params: CallToolRequest['params']): Promise<CallToolResult> {
  const args = params.arguments ?? {};
  switch (params.name) {
    case 'get_studio_info':
      return noArguments(params.name, args) ?? toolResult(studioInfo(context));
    case 'list_services':
      return (
        noArguments(params.name, args) ??
        toolResult({ services: context.profile.services.map(({ name, description }) => ({ name, description })) })
      );
    case 'submit_inquiry':
      return submitInquiry(context, args);
    default:
      throw invalidParams(`Unknown tool "${params.name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
  }
}

/** A tool without arguments refuses any (its inputSchema has no properties and no others allowed). */
function noArguments(tool: string, args: Record<string, unknown>): CallToolResult | undefined {
  const names = Object.keys(args);
  if (names.length === 0) return undefined;
  return toolError(`${tool} takes no arguments; call it again without ${names.map((name) => JSON.stringify(name)).join(', ')}.`);
}

function studioInfo({ profile, urls }: McpContext) {
  return {
    name: profile.name,
    description: profile.description,
    location: profile.location,
    website: profile.website,
    contactEmail: profile.email,
    responseTime: profile.responseTime,
    links: {
      contactEndpoint: `${urls.issuer}/api/contact`,
      openapi: `${urls.issuer}/openapi.json`,
      authMd: urls.authMd,
      serverCard: `${urls.issuer}/.well-known/mcp/server-card.json`,
    },
  };
}

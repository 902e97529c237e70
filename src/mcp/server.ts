// The MCP tool server: a fresh low-level Server per HTTP request (stateless, every protocol version
// of src/mcp/versions.ts), whose tools call the same inquiry service as POST /api/contact. Tool errors
// are results with isError: true that say what to fix, so an agent can correct its call and retry.
import { type CallToolRequest, type CallToolResult, Server } from '@modelcontextprotocol/server';
import type { McpContext } from './context.js';
import { invalidParams, methodNotFound, validParams } from './json-rpc.js';
import { toolError, toolResult } from './results.js';
import { submitInquiry } from './submit-inquiry.js';
import { TOOLS } from './tools.js';
import { MCP_INITIALIZE_VERSIONS, MCP_PROTOCOL_VERSIONS } from './versions.js';

export const MCP_SERVER_NAME = 'studio-inquiry';
export const MCP_SERVER_VERSION = '1.0.0';

export function buildMcpServer(context: McpContext): Server {
  const serverInfo = { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: `${context.profile.name} inquiries` };
  const signedIn =
    context.verifiedEmail === undefined
      ? 'No sign-in is needed.'
      : 'You are signed in: inquiries are sent on behalf of the person who signed in, with their verified email.';
  const instructions = `Tools of ${context.profile.name}: look the studio up, then send a project inquiry with submit_inquiry. ${signedIn}`;
  const capabilities = { tools: { listChanged: false } };
  const supportedProtocolVersions = [...MCP_PROTOCOL_VERSIONS];
  const server = new Server(serverInfo, { capabilities, instructions, supportedProtocolVersions });
  // initialize, tools/list and tools/call go to the fallback handler, which gets each request as
  // sent: a registered handler's request is checked by the SDK first, bad params answered -32603
  // (Internal error) with the validator's issues. Any other method has no handler.
  server.removeRequestHandler('initialize');
  server.fallbackRequestHandler = async (request) => {
    switch (request.method) {
      case 'initialize': {
        // Stateless: each request has a server of its own, so nothing of the client's is kept.
        const { params } = validParams('InitializeRequest', request);
        const asked = MCP_INITIALIZE_VERSIONS.find((version) => version === params.protocolVersion);
        return { protocolVersion: asked ?? MCP_INITIALIZE_VERSIONS[0], capabilities, serverInfo, instructions };
      }
      case 'tools/list': {
        const { params } = validParams('ListToolsRequest', request);
        // MCP Pagination: every tool is in the first page, so no cursor was ever handed out.
        if (params?.cursor !== undefined)
          throw invalidParams('Invalid params: params.cursor: no such cursor; every tool is in the first page.');
        return { tools: TOOLS.map((tool) => ({ ...tool })) };
      }
      case 'tools/call':
        return callTool(context, validParams('CallToolRequest', request).params);
      default:
        throw methodNotFound();
    }
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

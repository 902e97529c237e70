// POST /mcp: the MCP streamable-HTTP endpoint, stateless (a fresh server and transport per request,
// nothing kept between requests, so any number of instances can serve it); GET and DELETE answer
// 405. Also the server card, at /.well-known/mcp/server-card.json and /mcp/server-card.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { AgentAuth } from '../../auth/service.js';
import { authUrls } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { InquiryService } from '../../inquiries/service.js';
import { createWindowLimiter } from '../../mcp/rate-limit.js';
import { buildMcpServer, MCP_SERVER_NAME, MCP_SERVER_VERSION } from '../../mcp/server.js';
import { TOOLS } from '../../mcp/tools.js';
import type { StudioProfile } from '../../studio/profile.js';
import { InvalidBodyError, problem, sendProblem } from '../problems.js';
import { bearerClient } from './contact.js';

/** An inquiry at its longest is ~11 KB; JSON-RPC framing and a batch of calls fit well within this. */
export const MCP_BODY_LIMIT_BYTES = 128 * 1024;
const CARD_MAX_AGE_SECONDS = 3600;
const JSON_RPC_PARSE_ERROR = -32700;
const JSON_RPC_INVALID_REQUEST = -32600;
/**
 * The most messages a JSON-RPC batch (MCP before protocol version 2025-06-18, which dropped
 * batches) may hold: each answer costs the server far more than its request (a `tools/list` of a
 * few dozen bytes is answered with kilobytes), so a request of 100 was answered with ~78 times its
 * size. A client sends the rest in further requests.
 */
export const MCP_MAX_BATCH = 10;
export const NOT_JSON_MESSAGE =
  'Parse error: the request body is not valid JSON (keys named __proto__ or constructor.prototype are refused too); send a JSON-RPC message.';
/** The Invalid Request message for JSON that is not a JSON-RPC message (`which`: the body, or which of a batch). */
export const notJsonRpcMessage = (which: string) =>
  `Invalid Request: ${which} is not a JSON-RPC 2.0 message (jsonrpc "2.0"; a request has a method and an id that is a string or an integer, a notification a method and no id).`;
/** Fastify's JSON parser refusals, as JSON-RPC Parse error messages (fixed texts). */
const PARSE_ERRORS: Record<string, string> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Parse error: the request body is empty; send a JSON-RPC message.',
  // Also raised for prototype-poisoning keys, which the parser refuses outright.
  FST_ERR_CTP_INVALID_JSON_BODY: NOT_JSON_MESSAGE,
};

export interface McpRouteOptions {
  readonly config: Config;
  readonly profile: StudioProfile;
  readonly inquiries: InquiryService;
  readonly auth: Pick<AgentAuth, 'authenticate'>;
  readonly redis: Redis | null;
}

export async function mcpRoutes(app: FastifyInstance, { config, profile, inquiries, auth, redis }: McpRouteOptions) {
  const urls = authUrls(config.publicUrl);
  const limiter = createWindowLimiter(config.rateLimitInquiries, redis);

  app.post('/mcp', { bodyLimit: MCP_BODY_LIMIT_BYTES, errorHandler: jsonRpcParseError }, async (request, reply) => {
    // MCP transport spec, "Security Warning": validate Origin against DNS rebinding. A browser page
    // from another origin is refused; clients that send no Origin (agents, servers) are not browsers.
    const origin = request.headers.origin;
    if (origin !== undefined && config.corsOrigins !== '*' && !config.corsOrigins.includes(origin)) {
      return sendProblem(reply, problem(403, 'origin_not_allowed', `Origin ${origin.slice(0, 200)} may not call this MCP server.`));
    }
    if (Array.isArray(request.body) && (request.body.length === 0 || request.body.length > MCP_MAX_BATCH)) {
      const message =
        request.body.length === 0
          ? 'Invalid Request: the batch is empty; send at least one JSON-RPC message.'
          : `Invalid Request: a batch may hold at most ${MCP_MAX_BATCH} messages (this one holds ${request.body.length}); send the rest in further requests.`;
      // JSON-RPC 2.0 §6: a batch that cannot be taken is answered with one error, id null.
      return invalidRequest(reply, message);
    }
    // JSON-RPC 2.0 §5.1: valid JSON that is not a message is an Invalid Request (the transport would
    // call it a Parse error, which says the JSON itself could not be read).
    const messages: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
    const notMessage = messages.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
    if (notMessage !== -1) {
      return invalidRequest(reply, notJsonRpcMessage(Array.isArray(request.body) ? `message ${notMessage + 1} of the batch` : 'the body'));
    }
    const clientId = await bearerClient(request.headers.authorization, reply, {
      auth,
      resourceMetadataUrl: urls.mcpProtectedResourceMetadata,
      audience: urls.mcpResource,
    });
    const server = buildMcpServer({ profile, urls, inquiries, limiter, clientAddress: request.ip, clientId });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the response itself: hand it the headers set so far (security, CORS,
    // request id, WWW-Authenticate) and let go of the reply.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: there is no stream to resume (GET) and no session to end (DELETE). Answered before
  // any body is read, so that a body of any kind gets this answer too.
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(
      reply.header('allow', 'POST'),
      problem(405, 'method_not_allowed', 'This MCP server is stateless: send JSON-RPC with POST.'),
    );
  for (const method of ['GET', 'DELETE'] as const) app.route({ method, url: '/mcp', onRequest: notAllowed, handler: notAllowed });

  const card = serverCard(config, profile);
  for (const path of ['/.well-known/mcp/server-card.json', '/mcp/server-card']) {
    app.get(path, async (_request, reply) =>
      reply.header('access-control-allow-origin', '*').header('cache-control', `public, max-age=${CARD_MAX_AGE_SECONDS}`).send(card),
    );
  }
}

/** A JSON-RPC Invalid Request, id null: none of the request runs. */
const invalidRequest = (reply: FastifyReply, message: string) =>
  reply
    .code(400)
    .type('application/json')
    .send({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC_INVALID_REQUEST, message } });

/**
 * JSON-RPC 2.0 §5.1: a body that is not JSON is a Parse error (-32700) with id null (no id could be
 * read), the shape MCP clients parse; Fastify's JSON parser refuses it before the route runs. The
 * security headers and X-Request-Id are already set (onRequest). Any other error (413, 415, 500)
 * is thrown on to the app's handler, as problem+json like every other endpoint's HTTP-level refusals.
 */
function jsonRpcParseError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const message =
    error instanceof InvalidBodyError ? `Parse error: ${error.message}` : error.code === undefined ? undefined : PARSE_ERRORS[error.code];
  if (message === undefined) throw error;
  request.log.debug({ err: error }, 'request rejected');
  return reply
    .code(400)
    .type('application/json')
    .send({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC_PARSE_ERROR, message } });
}

/** The server card: the current fields and the earlier ones scanners still read, in one document. */
export function serverCard(config: Config, profile: StudioProfile) {
  const base = config.publicUrl;
  const host = new URL(base).hostname.split('.').reverse().join('.');
  const description = `Send project inquiries to ${profile.name} and look up its services.`;
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    name: `${host}/${MCP_SERVER_NAME}`,
    version: MCP_SERVER_VERSION,
    title: `${profile.name} inquiries`,
    description: description.length <= 100 ? description : `${description.slice(0, 99)}…`,
    websiteUrl: profile.website,
    remotes: [{ type: 'streamable-http', url: `${base}/mcp` }],
    serverInfo: { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    transport: { type: 'streamable-http', endpoint: '/mcp' },
    capabilities: { tools: { listChanged: false } },
    tools: TOOLS.map(({ name, description: toolDescription }) => ({ name, description: toolDescription })),
    authentication: { required: false, schemes: ['bearer'] },
  };
}

// POST /mcp: the MCP streamable-HTTP endpoint, stateless (a fresh server and transport per request,
// nothing kept between requests, so any number of instances can serve it); other methods answer
// 405. Also the server card, at /.well-known/mcp/server-card.json and /mcp/server-card.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentAuth } from '../../auth/service.js';
import { authUrls, basePath } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { WindowLimiter } from '../../inquiries/rate-limit.js';
import type { InquiryService } from '../../inquiries/service.js';
import { buildMcpServer, MCP_SERVER_NAME, MCP_SERVER_VERSION } from '../../mcp/server.js';
import { TOOLS } from '../../mcp/tools.js';
import type { StudioProfile } from '../../studio/profile.js';
import { bearerClient } from '../bearer.js';
import { InvalidBodyError, problem, refusal, sendProblem } from '../problems.js';

/** An inquiry at its longest is ~11 KB; JSON-RPC framing and a batch of calls fit well within this. */
export const MCP_BODY_LIMIT_BYTES = 128 * 1024;
const CARD_MAX_AGE_SECONDS = 3600;
const JSON_RPC_PARSE_ERROR = -32700;
const JSON_RPC_INVALID_REQUEST = -32600;
/**
 * The most messages a JSON-RPC batch (MCP before protocol version 2025-06-18) may hold: an answer
 * costs far more than its request (a `tools/list` of a few dozen bytes gets kilobytes). A client
 * sends the rest in further requests.
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
  /** RATE_LIMIT_INQUIRIES, shared with POST /api/contact. */
  readonly limiter: WindowLimiter;
}

export async function mcpRoutes(app: FastifyInstance, { config, profile, inquiries, auth, limiter }: McpRouteOptions) {
  const urls = authUrls(config.publicUrl);

  // MCP transport spec, "Security Warning": validate Origin against DNS rebinding. A browser page
  // from another origin is refused, whatever it sends and before its body is read; clients that
  // send no Origin (agents, servers) are not browsers.
  const refuseForeignOrigin = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && config.corsOrigins !== '*' && !config.corsOrigins.includes(origin)) {
      return sendProblem(reply, problem(403, 'origin_not_allowed', `Origin ${origin.slice(0, 200)} may not call this MCP server.`));
    }
  };

  app.post(
    '/mcp',
    { bodyLimit: MCP_BODY_LIMIT_BYTES, errorHandler: jsonRpcParseError, onRequest: refuseForeignOrigin },
    async (request, reply) => {
      const batch = Array.isArray(request.body);
      const messages: unknown[] = batch ? (request.body as unknown[]) : [request.body];
      const refusal = batchRefusal(messages, batch) ?? notMessages(messages, batch);
      if (refusal !== undefined) return invalidRequest(reply, refusal);
      for (const message of messages) dropTaskMetadata(message);
      // MCP "Cancellation": a receiver MAY ignore a cancellation, and this one does. Within a batch
      // the SDK would drop the cancelled request's answer and, waiting for it, never answer at all.
      const body = batch ? messages.filter((message) => !isCancellation(message)) : request.body;
      const { clientId, trustedAgent, tokenRejected } = await bearerClient(request.headers.authorization, reply, {
        auth,
        resourceMetadataUrl: urls.mcpProtectedResourceMetadata,
        audience: urls.mcpResource,
      });
      const server = buildMcpServer({
        profile,
        urls,
        inquiries,
        limiter,
        clientAddress: request.ip,
        clientId,
        trustedAgent,
        tokenRejected,
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // A client that hangs up is not waited for: the server and transport are closed all the same.
      const hungUp = new Promise<undefined>((resolve) => reply.raw.once('close', () => resolve(undefined)));
      try {
        await server.connect(transport);
        const answer = await Promise.race([transport.handleRequest(webRequest(request, urls.mcpResource), { parsedBody: body }), hungUp]);
        if (answer === undefined) return reply.hijack();
        reply.code(answer.status);
        for (const [name, value] of answer.headers) reply.header(name, value);
        const text = await answer.text();
        // JSON-RPC 2.0 §6: a batch is answered with an array, however many answers it has; the
        // transport sends a lone answer bare.
        return reply.send(batch && answer.status === 200 && text.startsWith('{') ? `[${text}]` : text === '' ? undefined : text);
      } finally {
        await server.close();
      }
    },
  );

  // Stateless: there is no stream to resume (GET), no session to end (DELETE) and nothing else to
  // do here. Answered before any body is read, so that a body of any kind gets this answer too.
  const notAllowed = refusal(async (_request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(
      reply.header('allow', 'POST'),
      problem(405, 'method_not_allowed', 'This MCP server is stateless: send JSON-RPC with POST.'),
    ),
  );
  for (const method of ['GET', 'DELETE', 'PUT', 'PATCH'] as const) {
    app.route({ method, url: '/mcp', onRequest: [refuseForeignOrigin, notAllowed], handler: notAllowed });
  }

  const card = serverCard(config, profile);
  for (const path of ['/.well-known/mcp/server-card.json', '/mcp/server-card']) {
    app.get(path, async (_request, reply) =>
      reply.header('access-control-allow-origin', '*').header('cache-control', `public, max-age=${CARD_MAX_AGE_SECONDS}`).send(card),
    );
  }
}

/** Why a batch is refused as a whole: empty, too long, or two requests with one id. */
function batchRefusal(messages: readonly unknown[], batch: boolean): string | undefined {
  if (!batch) return undefined;
  if (messages.length === 0) return 'Invalid Request: the batch is empty; send at least one JSON-RPC message.';
  if (messages.length > MCP_MAX_BATCH) {
    return `Invalid Request: a batch may hold at most ${MCP_MAX_BATCH} messages (this one holds ${messages.length}); send the rest in further requests.`;
  }
  // Each answer is matched to its request by id: two requests with one id could not be told apart.
  const ids = new Set<unknown>();
  for (const message of messages) {
    if (!isRequest(message)) continue;
    if (ids.has(message.id))
      return `Invalid Request: the batch holds two requests with the id ${JSON.stringify(message.id)}; give each request an id of its own.`;
    ids.add(message.id);
  }
  return undefined;
}

/** JSON-RPC 2.0 §5.1: valid JSON that is not a message is an Invalid Request (not a Parse error, which says the JSON could not be read). */
function notMessages(messages: readonly unknown[], batch: boolean): string | undefined {
  const index = messages.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
  if (index === -1) return undefined;
  return notJsonRpcMessage(batch ? `message ${index + 1} of the batch` : 'the body');
}

const isCancellation = (message: unknown) =>
  typeof message === 'object' && message !== null && 'method' in message && message.method === 'notifications/cancelled';

const isRequest = (message: unknown): message is { method: string; id: unknown; params?: unknown } =>
  typeof message === 'object' && message !== null && 'method' in message && 'id' in message;

/**
 * MCP 2025-11-25, Tasks: a server that does not declare the tasks capability "MUST process requests
 * of that type normally, ignoring any task-augmentation metadata" (the SDK refuses them instead).
 */
function dropTaskMetadata(message: unknown): void {
  if (!isRequest(message) || typeof message.params !== 'object' || message.params === null) return;
  delete (message.params as { task?: unknown }).task;
}

/** The transport's view of the request: the headers it reads (the body is handed over parsed). */
function webRequest(request: FastifyRequest, url: string): Request {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id']) {
    const value = request.headers[name];
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(url, { method: 'POST', headers });
}

/** A JSON-RPC Invalid Request, id null: none of the request runs. */
const invalidRequest = (reply: FastifyReply, message: string) =>
  reply
    .code(400)
    .type('application/json')
    .send({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC_INVALID_REQUEST, message } });

/**
 * JSON-RPC 2.0 §5.1: a body Fastify's parser refuses as not JSON is a Parse error (-32700), id null,
 * with the security headers and X-Request-Id already set. Any other error (413, 415, 500) goes on to
 * the app's handler, as problem+json like every other endpoint's HTTP-level refusals.
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
    // A path on the server's host (PUBLIC_URL's path first), as the remote's url is.
    transport: { type: 'streamable-http', endpoint: `${basePath(base)}/mcp` },
    capabilities: { tools: { listChanged: false } },
    tools: TOOLS.map(({ name, description: toolDescription }) => ({ name, description: toolDescription })),
    authentication: { required: false, schemes: ['bearer'] },
  };
}

// POST /mcp and /mcp/verified: the MCP streamable-HTTP endpoints on the SDK's public API, stateless
// (a fresh server per request): 2026-07-28 through createMcpHandler, the 2025 versions through a
// JSON-answering stateless transport; other methods answer 405. /mcp is open to every agent,
// /mcp/verified requires a signed-in person. Also the server card and the MCP catalog.
import {
  createMcpHandler,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentAuth, VerifiedPerson } from '../../auth/service.js';
import { authUrls } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { WindowLimiter } from '../../inquiries/rate-limit.js';
import type { InquiryService } from '../../inquiries/service.js';
import type { McpContext } from '../../mcp/context.js';
import { buildMcpServer } from '../../mcp/server.js';
import { MCP_CATALOG_PATH, mcpCatalog, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_PATHS, serverCard } from '../../mcp/server-card.js';
import { allowsBatches, BATCH_VERSION } from '../../mcp/versions.js';
import type { StudioProfile } from '../../studio/profile.js';
import { prefers, varyOnAccept } from '../accept.js';
import { bearerClient, bearerToken } from '../bearer.js';
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
  readonly auth: Pick<AgentAuth, 'authenticate' | 'authenticatePerson'>;
  /** RATE_LIMIT_INQUIRIES, shared with POST /api/contact. */
  readonly limiter: WindowLimiter;
}

export async function mcpRoutes(app: FastifyInstance, { config, profile, inquiries, auth, limiter }: McpRouteOptions) {
  const urls = authUrls(config.publicUrl);
  const answer = mcpAnswerer();

  // MCP transport spec, "Security Warning": validate Origin against DNS rebinding. A browser page
  // from another origin is refused, whatever it sends and before its body is read; clients that
  // send no Origin (agents, servers) are not browsers.
  const refuseForeignOrigin = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && config.corsOrigins !== '*' && !config.corsOrigins.includes(origin)) {
      return sendProblem(reply, problem(403, 'origin_not_allowed', `Origin ${origin.slice(0, 200)} may not call this MCP server.`));
    }
  };

  // MCP Authorization, "Authorization Server Discovery": a request without a signed-in person's
  // token is answered 401 before its body is read, naming this resource's metadata (RFC 9728 §5.1).
  const people = new WeakMap<FastifyRequest, VerifiedPerson>();
  const requirePerson = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    const person = token === undefined ? null : await auth.authenticatePerson(token, urls.mcpVerifiedResource);
    if (person !== null) return void people.set(request, person);
    const error = token === undefined ? '' : 'error="invalid_token", ';
    return sendProblem(
      reply.header('www-authenticate', `Bearer ${error}resource_metadata="${urls.mcpVerifiedProtectedResourceMetadata}"`),
      problem(401, 'sign_in_required', SIGN_IN_REQUIRED),
    );
  };

  /** The caller of /mcp: a valid token's client, or anonymous (a refused token said so). */
  const openCaller = async (request: FastifyRequest, reply: FastifyReply): Promise<Caller> =>
    bearerClient(request.headers.authorization, reply, {
      auth,
      resourceMetadataUrl: urls.mcpProtectedResourceMetadata,
      audience: urls.mcpResource,
    });
  /** The caller of /mcp/verified: the person requirePerson found. */
  const verifiedCaller = async (request: FastifyRequest): Promise<Caller> => {
    const person = people.get(request);
    if (person === undefined) throw new Error('/mcp/verified reached without its person');
    return { clientId: person.clientId, trustedAgent: true, tokenRejected: false, verifiedEmail: person.email };
  };

  for (const { path, resource, caller, onRequest } of [
    { path: MCP_PATH, resource: urls.mcpResource, caller: openCaller, onRequest: [refuseForeignOrigin] },
    {
      path: MCP_VERIFIED_PATH,
      resource: urls.mcpVerifiedResource,
      caller: verifiedCaller,
      onRequest: [refuseForeignOrigin, requirePerson],
    },
  ]) {
    serve(path, resource, caller, onRequest);
  }

  function serve(
    path: string,
    resource: string,
    callerOf: (request: FastifyRequest, reply: FastifyReply) => Promise<Caller>,
    onRequest: ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>)[],
  ) {
    app.post(path, { bodyLimit: MCP_BODY_LIMIT_BYTES, errorHandler: jsonRpcParseError, onRequest }, async (request, reply) => {
      const batch = Array.isArray(request.body);
      const messages: unknown[] = batch ? (request.body as unknown[]) : [request.body];
      const refused = batchRefusal(messages, batch, headerOf(request, 'mcp-protocol-version')) ?? notMessages(messages, batch);
      if (refused !== undefined) return invalidRequest(reply, refused);
      for (const message of messages) dropTaskMetadata(message);
      // MCP "Cancellation": a receiver MAY ignore a cancellation, and this one does. Within a batch
      // the SDK would drop the cancelled request's answer and, waiting for it, never answer at all.
      const body = batch ? messages.filter((message) => !isCancellation(message)) : request.body;
      const caller = await callerOf(request, reply);
      const context: McpContext = { profile, urls, inquiries, limiter, clientAddress: request.ip, ...caller };
      // A client that hangs up is not waited for: its exchange is aborted and its server closed.
      const hangUp = new AbortController();
      reply.raw.once('close', () => hangUp.abort());
      const answered = await answer(webRequest(request, resource, hangUp.signal), body, context);
      if (answered === undefined || hangUp.signal.aborted) return reply.hijack();
      reply.code(answered.status);
      for (const [name, value] of answered.headers) reply.header(name, value);
      const text = await answered.text();
      // JSON-RPC 2.0 §6: a batch is answered with an array, however many answers it has; the
      // transport sends a lone answer bare.
      return reply.send(batch && answered.status === 200 && text.startsWith('{') ? `[${text}]` : text === '' ? undefined : text);
    });
  }

  // Stateless: there is no stream to resume (GET), no session to end (DELETE) and nothing else to
  // do here. Answered before any body is read, so that a body of any kind gets this answer too.
  const notAllowed = refusal(async (_request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(
      reply.header('allow', 'POST'),
      problem(405, 'method_not_allowed', 'This MCP server is stateless: send JSON-RPC with POST.'),
    ),
  );
  for (const url of [MCP_PATH, MCP_VERIFIED_PATH]) {
    for (const method of MCP_NOT_ALLOWED) app.route({ method, url, onRequest: [refuseForeignOrigin, notAllowed], handler: notAllowed });
  }

  const publish = (reply: FastifyReply, body: unknown, type: string) =>
    varyOnAccept(reply)
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${CARD_MAX_AGE_SECONDS}`)
      .type(type)
      .send(JSON.stringify(body));
  const card = serverCard(config.publicUrl, profile);
  for (const path of SERVER_CARD_PATHS) {
    app.get(path, async (request, reply) =>
      publish(
        reply,
        card,
        prefers(request.headers.accept, SERVER_CARD_MEDIA_TYPE, 'application/json', true) ? SERVER_CARD_MEDIA_TYPE : 'application/json',
      ),
    );
  }
  const catalog = mcpCatalog(config.publicUrl, profile);
  app.get(MCP_CATALOG_PATH, async (_request, reply) => publish(reply, catalog, 'application/json'));
}

export const MCP_PATH = '/mcp';
export const MCP_VERIFIED_PATH = '/mcp/verified';
export const SIGN_IN_REQUIRED =
  'This MCP endpoint requires a signed-in person: sign in with OAuth (the resource metadata named in WWW-Authenticate), ' +
  'or use /mcp, which needs no sign-in.';

type Caller = Pick<McpContext, 'clientId' | 'trustedAgent' | 'tokenRejected' | 'verifiedEmail'>;

/** The methods answered 405 at /mcp and /mcp/verified (and HEAD, as GET's); the OpenAPI document lists them. */
export const MCP_NOT_ALLOWED = ['GET', 'DELETE', 'PUT', 'PATCH'] as const;

/**
 * The SDK's two eras behind one call: a 2026-07-28 request (its per-request _meta) goes to
 * createMcpHandler; a 2025 one to a stateless transport that answers JSON, as it always did here
 * (the handler's own 2025 leg answers with an SSE stream). Undefined: the exchange was aborted.
 */
function mcpAnswerer() {
  const callers = new WeakMap<Request, McpContext>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const context = requestInfo === undefined ? undefined : callers.get(requestInfo);
      if (context === undefined) throw new Error('An MCP request without its caller');
      return buildMcpServer(context);
    },
    { legacy: 'reject', maxRequestBodySize: MCP_BODY_LIMIT_BYTES },
  );
  return async (request: Request, body: unknown, context: McpContext): Promise<Response | undefined> => {
    if (!(await isLegacyRequest(request, body))) {
      callers.set(request, context);
      const response = await modern.fetch(request, { parsedBody: body });
      return response.status === 499 ? undefined : response;
    }
    const server = buildMcpServer(context);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const aborted = new Promise<undefined>((resolve) => request.signal.addEventListener('abort', () => resolve(undefined)));
    try {
      await server.connect(transport);
      return await Promise.race([transport.handleRequest(request, { parsedBody: body }), aborted]);
    } finally {
      await server.close();
    }
  };
}

/**
 * Why a batch is refused as a whole: under a version without batches (2025-06-18 removed them),
 * empty, too long, holding initialize, or two requests with one id.
 */
function batchRefusal(messages: readonly unknown[], batch: boolean, protocolVersion: string | undefined): string | undefined {
  if (!batch) return undefined;
  if (!allowsBatches(protocolVersion)) {
    return `Invalid Request: MCP ${String(protocolVersion).slice(0, 40)} has no JSON-RPC batches (only ${BATCH_VERSION} has); send one message per request.`;
  }
  if (messages.length === 0) return 'Invalid Request: the batch is empty; send at least one JSON-RPC message.';
  if (messages.length > MCP_MAX_BATCH) {
    return `Invalid Request: a batch may hold at most ${MCP_MAX_BATCH} messages (this one holds ${messages.length}); send the rest in further requests.`;
  }
  // MCP 2025-03-26, Lifecycle, Initialization: "The initialize request MUST NOT be part of a JSON-RPC batch".
  if (messages.some((message) => isRequest(message) && message.method === 'initialize')) {
    return 'Invalid Request: initialize must not be part of a JSON-RPC batch (MCP 2025-03-26, Lifecycle); send it alone, then batch the rest.';
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
  const index = messages.findIndex((message) => !isJsonRpcMessage(message));
  if (index === -1) return undefined;
  return notJsonRpcMessage(batch ? `message ${index + 1} of the batch` : 'the body');
}

const isJsonRpcMessage = (message: unknown) =>
  isJSONRPCRequest(message) || isJSONRPCNotification(message) || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);

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

/** The SDK's view of the request: the headers it reads (the body is handed over parsed). */
function webRequest(request: FastifyRequest, resource: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']) {
    const value = headerOf(request, name);
    if (value !== undefined) headers.set(name, value);
  }
  return new Request(resource, { method: 'POST', headers, signal });
}

/** A request header's value; several of the same name joined as Node joins them. */
function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
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

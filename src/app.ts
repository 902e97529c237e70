// Composes the HTTP application: cross-cutting plugins, then routes. Used by the entry point and by
// every test, so what is tested is what runs.
import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SigningKeys } from './auth/keys.js';
import { authFeatures } from './auth/metadata.js';
import type { AgentAuth } from './auth/service.js';
import type { SignIn } from './auth/sign-in.js';
import { authUrls } from './auth/urls.js';
import type { Config } from './config.js';
import { corsOptions } from './http/cors.js';
import { registerJsonParser } from './http/json-body.js';
import { problem, registerProblemHandlers, sendError, sendProblemFor } from './http/problems.js';
import { answerPublicPreflight, isPublicDocument } from './http/public-documents.js';
import { RawAnswers, REQUEST_TIMEOUT_MS, serverTimeouts } from './http/raw-server.js';
import { type AuthRateLimits, agentAuthRoutes } from './http/routes/agent-auth.js';
import { authMdRoute } from './http/routes/auth-md.js';
import { contactRoute } from './http/routes/contact.js';
import { contactChallengeRoute } from './http/routes/contact-challenge.js';
import { discoveryRoutes } from './http/routes/discovery.js';
import { HEALTH_PATH, healthRoute } from './http/routes/health.js';
import { inboxRoutes } from './http/routes/inbox.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { countRequests, metricsRoute, UNMATCHED_ROUTE } from './http/routes/metrics.js';
import { oauthRoutes } from './http/routes/oauth.js';
import { openApiRoutes } from './http/routes/openapi.js';
import { websiteRoutes } from './http/routes/website.js';
import { securityHeaders } from './http/security-headers.js';
import { createWindowLimiter } from './inquiries/rate-limit.js';
import { CONTACT_BODY_LIMIT_BYTES } from './inquiries/schema.js';
import type { InquiryService } from './inquiries/service.js';
import type { Metrics } from './metrics.js';
import type { Services } from './services.js';
import type { ProofOfWork } from './spam/proof-of-work.js';
import type { Store } from './storage/ports.js';
import type { StudioProfile } from './studio/profile.js';
import { ajv } from './validation/ajv.js';

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly profile: StudioProfile;
  readonly store: Store;
  readonly keys: SigningKeys;
  readonly auth: AgentAuth;
  /** The authorization-code flow (src/auth/sign-in.ts). */
  readonly signIn: SignIn;
  readonly inquiries: InquiryService;
  /** The contact page's proof of work (src/spam/proof-of-work.ts). */
  readonly proofOfWork: ProofOfWork;
  /** Redis for rate limits shared by all instances (REDIS_URL), or null. */
  readonly redis?: Redis | null;
  /** Prometheus metrics; /metrics is served when METRICS_TOKEN is set. */
  readonly metrics?: Metrics;
  /** Per-address limits of the agent-auth endpoints (tests raise them; defaults otherwise). */
  readonly authRateLimits?: AuthRateLimits;
  /** Per-address limit of GET /api/contact/challenge (tests raise it; CHALLENGE_RATE_LIMIT otherwise). */
  readonly challengeRateLimit?: { readonly max: number; readonly timeWindow: number };
  /** The studio's inbox (src/services.ts), or null where nobody may sign in. */
  readonly inbox?: Services['inbox'];
  /** Sign-in requests per client address (tests raise it; SIGN_IN_RATE_LIMIT otherwise). */
  readonly signInLimit?: { readonly max: number; readonly timeWindow: number };
  /** How long a request may take to arrive (REQUEST_TIMEOUT_MS; tests shorten it). */
  readonly requestTimeoutMs?: number;
}

/** The app's dependencies from the configuration and the services (for the entry point and tests alike). */
export function appDeps(base: Pick<AppDeps, 'config' | 'logger' | 'profile'>, services: Services): AppDeps {
  const { store, keys, auth, signIn, inquiries, proofOfWork, metrics, redis, inbox } = services;
  return { ...base, store, keys, auth, signIn, inquiries, proofOfWork, metrics, redis, inbox };
}

export const BODY_LIMIT_BYTES = CONTACT_BODY_LIMIT_BYTES;

/** The response headers a page of an allowed origin may read. */
const EXPOSED_HEADERS = [
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'WWW-Authenticate',
  'X-Request-Id',
  'Idempotent-Replayed',
  'Inquiry-Outcome',
];

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const headers = securityHeaders(config.publicUrl.startsWith('https:'));
  // docs/api.md "Every response": the security headers and the request id, on errors too.
  const setResponseHeaders = (request: FastifyRequest, reply: FastifyReply) => reply.headers(headers).header('x-request-id', request.id);
  const allowedOrigin = (origin: string | undefined) =>
    origin === undefined ? undefined : config.corsOrigins === '*' ? '*' : config.corsOrigins.includes(origin) ? origin : undefined;
  /**
   * CORS on the answers given before the CORS plugin's hook runs (a path Fastify cannot decode, a
   * request arriving while the service closes), so that a page of an allowed origin reads their
   * status and Retry-After rather than a network error.
   */
  const setCorsHeaders = (request: FastifyRequest, reply: FastifyReply) => {
    // As the CORS plugin does: where the answer depends on the origin, caches are told so.
    if (config.corsOrigins !== '*') reply.header('vary', 'Origin');
    const origin = allowedOrigin(request.headers.origin);
    if (origin === undefined) return;
    reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
  };
  let closing = false;
  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const rawAnswers = new RawAnswers(headers, deps.logger, requestTimeoutMs);
  /** Requests are counted for /metrics only where it is served. */
  const counted = config.metricsToken ? deps.metrics : undefined;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustProxy),
    requestIdHeader: false, // ids are ours: a client cannot forge another request's log lines
    genReqId: () => randomUUID(),
    // Fastify's own 503 while closing is a fixed application/json body without our headers: the
    // onRequest hook below answers those requests instead (Fastify still adds Connection: close).
    return503OnClosing: false,
    // Errors Fastify meets before routing (a path it cannot decode, such as /api/%zz) skip every
    // hook and the error handler: answered here in the same format, with the same headers.
    frameworkErrors: (error, request, reply) => {
      setResponseHeaders(request, reply);
      setCorsHeaders(request, reply);
      sendError(error, request, reply, BODY_LIMIT_BYTES);
      // No hook runs for these, onResponse included: counted here, as requests no route matched.
      counted?.requests.inc({ method: request.method, route: UNMATCHED_ROUTE, status: reply.statusCode });
    },
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. Node answers it itself by default
    // (requireHostHeader), before Fastify, with a bare 400 and none of the headers above: let
    // through, it is refused by the onRequest hook below, in the same format as every other error.
    http: { requireHostHeader: false, ...serverTimeouts(requestTimeoutMs) },
    // A request that has not arrived whole within this is answered 408 (src/http/raw-server.ts).
    requestTimeout: requestTimeoutMs,
    // Requests Node's parser refuses never reach Fastify's hooks: answered in the same format.
    clientErrorHandler: rawAnswers.refuse,
    // Load balancers ask for health every few seconds: keep those out of the request log.
    logController: new LogController({ disableRequestLogging: (request: { url?: string }) => request.url === HEALTH_PATH }),
  });
  rawAnswers.watch(app.server);
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  // Only JSON bodies are accepted (415 otherwise); Fastify would also parse text/plain.
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  registerProblemHandlers(app, BODY_LIMIT_BYTES);
  // Root preClose hooks run right after Fastify stops routing new work, before the server closes.
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    setResponseHeaders(request, reply);
    // HTTP/1.0 has no Host to send, and is answered without one (as Node's own check did).
    if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 1) {
      setCorsHeaders(request, reply);
      const detail = 'The request has no Host header, which every HTTP/1.1 request must send (RFC 9112 §3.2).';
      sendProblemFor(request, reply.header('connection', 'close'), problem(400, 'invalid_request', detail));
      return;
    }
    // Requests still arriving on open connections while closing get a 503 (the load balancer sends
    // them elsewhere), none of their work started. A preflight is still answered (CORS rules below),
    // or a page would never send the request that reads the 503.
    if (closing && request.method !== 'OPTIONS') {
      setCorsHeaders(request, reply);
      sendProblemFor(request, reply, problem(503, 'shutting_down', 'The service is shutting down. Send the request again in a moment.'));
      return;
    }
    // Before the API's CORS rules (registered below), which would refuse an origin they do not list.
    if (request.method === 'OPTIONS' && isPublicDocument(app, request.url)) {
      answerPublicPreflight(request, reply);
      return;
    }
    // Elsewhere an OPTIONS is a CORS preflight or nothing: one without its two headers (or with
    // either empty) gets the CORS plugin's 400 in our format (the plugin's own is text/plain).
    if (request.method === 'OPTIONS' && (!request.headers.origin || !request.headers['access-control-request-method'])) {
      const detail = 'OPTIONS is answered here only as a CORS preflight: send Origin and Access-Control-Request-Method.';
      sendProblemFor(request, reply, problem(400, 'invalid_request', detail));
      return;
    }
    done();
  });

  await app.register(cors, corsOptions(config.corsOrigins, EXPOSED_HEADERS));
  // Limits are set per route (global: false); the draft IETF RateLimit-* headers are sent.
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    // With Redis every instance counts against the same window. If the store fails, requests go
    // through: an inquiry is never lost to the rate limiter.
    ...(deps.redis && { redis: deps.redis, nameSpace: 'studio-inquiry:rate-limit:', skipOnError: true }),
  });

  if (counted && config.metricsToken) {
    countRequests(app, counted);
    await app.register(metricsRoute, { metrics: counted, token: config.metricsToken });
  }
  await app.register(healthRoute, { store: deps.store });
  const features = authFeatures(config);
  await app.register(discoveryRoutes, { publicUrl: config.publicUrl, profile: deps.profile, keys: deps.keys, features });
  await app.register(authMdRoute, { publicUrl: config.publicUrl, profile: deps.profile, features });
  await app.register(websiteRoutes, { config, profile: deps.profile });
  await app.register(openApiRoutes, { config, profile: deps.profile });
  if (deps.inbox) {
    const { access, service } = deps.inbox;
    await app.register(inboxRoutes, {
      config,
      profile: deps.profile,
      access,
      service,
      ...(deps.signInLimit && { signInLimit: deps.signInLimit }),
    });
  }
  // One allowance per client for both doors an inquiry comes in by.
  const limiter = createWindowLimiter(config.rateLimitInquiries, deps.redis ?? null);
  await app.register(mcpRoutes, { config, profile: deps.profile, inquiries: deps.inquiries, auth: deps.auth, limiter });
  await app.register(agentAuthRoutes, {
    auth: deps.auth,
    oauthTokens: deps.signIn.tokens,
    ...(deps.authRateLimits && { limits: deps.authRateLimits }),
  });
  if (features.emailEnabled) {
    await app.register(oauthRoutes, {
      publicUrl: config.publicUrl,
      studioName: deps.profile.name,
      clients: deps.signIn.clients,
      authorizations: deps.signIn.authorizations,
      contentSecurityPolicy: headers['content-security-policy'] ?? '',
      ...(deps.authRateLimits && { limits: deps.authRateLimits }),
    });
  }
  await app.register(contactRoute, {
    auth: deps.auth,
    resourceMetadataUrl: authUrls(config.publicUrl).protectedResourceMetadata,
    audience: authUrls(config.publicUrl).resource,
    inquiries: deps.inquiries,
    profile: deps.profile,
    limiter,
    proofOfWork: deps.proofOfWork,
    pageOrigin: new URL(config.publicUrl).origin,
  });
  await app.register(contactChallengeRoute, {
    proofOfWork: deps.proofOfWork,
    ...(deps.challengeRateLimit && { limit: deps.challengeRateLimit }),
  });
  return app;
}

/** TRUST_PROXY as Fastify's trustProxy; a number trusts that many hops (as proxy-addr counts them). */
function trustProxyOption(value: Config['trustProxy']) {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value;
}

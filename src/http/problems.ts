// The one place where errors become HTTP responses: RFC 9457 problem+json for /api/* (and every
// other route), with a stable `error` code. Unknown errors become a generic 500 that names the
// request id and nothing else: no message, stack, SQL or path ever reaches a client.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgentAuthError, OAuthError } from '../auth/errors.js';
import { DomainError, ValidationError } from '../errors.js';
import { type FieldError, toFieldErrors } from '../validation/ajv.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly error: string;
  readonly errors?: readonly FieldError[];
  readonly requestId?: string;
}

export function problem(status: number, error: string, detail: string, extra: Partial<Problem> = {}): Problem {
  // "about:blank" with the status phrase as title (RFC 9457 §4.2.1); `error` tells problems apart.
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, error, ...extra };
}

/** A request body in a form the service does not take (RFC 9110 §15.5.16); its message says which to send. */
export class UnsupportedMediaTypeError extends Error {
  readonly statusCode = 415;
}

/** A request body that cannot be read as JSON text (its message says why): 400 invalid_json. */
export class InvalidBodyError extends Error {
  readonly statusCode = 400;
}

/** Fastify's own 4xx errors, whose messages are fixed texts safe to show. */
const FASTIFY_ERRORS: Record<string, { error: string; detail?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    error: 'unsupported_media_type',
    detail: 'Send the request body as JSON with Content-Type: application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { error: 'invalid_request', detail: 'Content-Length does not match the body.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { error: 'payload_too_large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { error: 'invalid_json', detail: 'The request body is empty; send a JSON object.' },
  // Also raised for prototype-poisoning keys ("__proto__", "constructor.prototype"): the JSON
  // parser refuses them outright.
  FST_ERR_CTP_INVALID_JSON_BODY: { error: 'invalid_json' },
  // A path such as /api/%zz, which cannot be decoded to route it (answered through frameworkErrors).
  FST_ERR_BAD_URL: { error: 'invalid_request', detail: 'The URL has a malformed percent-encoding (%XX with two hex digits).' },
};

export function toProblem(error: FastifyError | Error, request: FastifyRequest, bodyLimit: number): Problem {
  if (error instanceof AgentAuthError) return problem(error.status, error.code, error.message);
  if (error instanceof OAuthError) return problem(error.status, error.code, error.description);
  if (error instanceof UnsupportedMediaTypeError) return problem(415, 'unsupported_media_type', error.message);
  if (error instanceof InvalidBodyError) return problem(400, 'invalid_json', error.message);
  if (error instanceof ValidationError) return problem(400, error.code, error.message, { errors: error.errors });
  if (error instanceof DomainError) {
    return error.status >= 500
      ? problem(error.status, error.code, error.message, { requestId: request.id })
      : problem(error.status, error.code, error.message);
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return problem(400, 'invalid_request', 'The request has invalid fields; see errors for each one.', {
      errors: toFieldErrors(fastifyError.validation as never),
    });
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 413) {
    const limit = request.routeOptions.bodyLimit ?? bodyLimit;
    return problem(413, 'payload_too_large', `The request body is larger than ${limit / 1024} KiB.`);
  }
  if (status === 429) return problem(429, 'rate_limited', error.message);
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return problem(status, known.error, known.detail ?? 'The request body is not valid JSON.');
  if (error instanceof SyntaxError && status === 400) return problem(400, 'invalid_json', 'The request body is not valid JSON.');
  if (status >= 400 && status < 500) return problem(status, 'invalid_request', STATUS_CODES[status] ?? 'Bad request');
  return problem(500, 'internal_error', 'Something went wrong on our side. Please try again.', { requestId: request.id });
}

/**
 * The raw answer to what Node's HTTP parser refused before any request existed (a malformed request
 * line or header, headers too large, a request too slow to arrive): problem+json with `headers` (the
 * security headers), as every other error, instead of Fastify's own JSON; the connection is closed.
 */
export function clientErrorResponse(code: string | undefined, headers: Readonly<Record<string, string>>, requestId: string): string {
  const [status, detail] =
    code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request line and headers are too large.']
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive.']
        : [400, 'The request is not well-formed HTTP/1.1.'];
  return rawProblemResponse(problem(status, 'invalid_request', detail), headers, requestId);
}

/** A problem as a whole HTTP/1.1 response, written straight to a socket that is then closed. */
export function rawProblemResponse(value: Problem, headers: Readonly<Record<string, string>>, requestId: string): string {
  const body = JSON.stringify({ ...value, requestId });
  const lines = [
    `HTTP/1.1 ${value.status} ${STATUS_CODES[value.status]}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    `x-request-id: ${requestId}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

export function sendProblem(reply: FastifyReply, value: Problem): FastifyReply {
  return reply.code(value.status).type(PROBLEM_CONTENT_TYPE).send(value);
}

/**
 * RFC 6749 §5.2 error JSON for /oauth/*: the same problem, in the shape OAuth clients parse, never
 * cached. A validation problem becomes invalid_request; a server failure becomes server_error.
 */
function sendOAuthError(reply: FastifyReply, value: Problem): FastifyReply {
  const detail = value.errors?.map((e) => `${e.pointer || 'body'} ${e.detail}`).join('; ') ?? value.detail;
  const error =
    value.status >= 500
      ? 'server_error'
      : value.error === 'invalid_json' || value.error === 'unsupported_media_type'
        ? 'invalid_request'
        : value.error;
  // RFC 6749 §5.2: a request in the wrong format is a 400 invalid_request.
  const wrongFormat = value.status === 415;
  return reply
    .code(wrongFormat ? 400 : value.status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .type('application/json')
    .send({ error, error_description: wrongFormat ? 'send the parameters form-encoded or as JSON' : detail });
}

/**
 * The request's path as the router reads it, for requests no route matched: without the scheme and
 * authority of an absolute-form target (`GET http://host/api/health`), percent-decoded (`%68ealth`),
 * reserved characters kept as sent (decodeURI), without the query.
 */
function pathOf(request: FastifyRequest): string {
  const path = (request.url.split('?', 1)[0] ?? '').replace(/^[a-z][a-z\d+.-]*:\/\/[^/]*/i, '');
  try {
    return decodeURI(path);
  } catch {
    return path; // a malformed escape: refused before any route (app.ts), never looked up here
  }
}

/** Whether the request is for /oauth/*: by its matched route, or by its path where no route matched. */
export const isOAuthRoute = (request: FastifyRequest): boolean => (request.routeOptions.url ?? pathOf(request)).startsWith('/oauth/');

/** A problem in the shape the path's clients parse: OAuth JSON on /oauth/*, problem+json elsewhere. */
export function sendProblemFor(request: FastifyRequest, reply: FastifyReply, value: Problem): FastifyReply {
  return isOAuthRoute(request) ? sendOAuthError(reply, value) : sendProblem(reply, value);
}

const notFound = (request: FastifyRequest) =>
  problem(404, 'not_found', `There is no ${request.method} ${pathOf(request).slice(0, 200)} here.`);

/** Handlers that answer a method with 405 at a path of their own: they do not make the method allowed there. */
const refusals = new WeakSet<object>();

/** Marks a route handler as a refusal (a 405 with a message of its own), for the routes' Allow lists. */
export function refusal<T extends object>(handler: T): T {
  refusals.add(handler);
  return handler;
}

/** Answers an error: logged (as an error only when it is ours, a 5xx), then sent as a problem. */
export function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, bodyLimit: number): FastifyReply {
  const value = toProblem(error, request, bodyLimit);
  if (value.status >= 500) request.log.error({ err: error }, 'request failed');
  // The answer, not the error: a validation error carries the body and schema in each of its
  // entries (ajv's verbose mode), thousands of them for a body of unknown keys.
  else request.log.debug({ status: value.status, error: value.error, detail: value.detail }, 'request rejected');
  // RFC 6585 §4: a 429 may say when to ask again (the per-IP limiter sets its own header).
  if (error instanceof AgentAuthError && error.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(error.retryAfterSeconds));
  return sendProblemFor(request, reply, value);
}

/**
 * Registers the error and not-found handlers. Routes registered after this are recorded by path, so
 * that a method a path does not serve is answered 405 with the path's `Allow` list (RFC 9110
 * §15.5.6), and only a path nothing is served at gets a 404.
 */
export function registerProblemHandlers(app: FastifyInstance, bodyLimit: number): void {
  const allowed = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    // Parametric and wildcard routes (the CORS preflight's OPTIONS *) name no one path.
    if (/[:*]/.test(route.url) || refusals.has(route.handler)) return;
    const methods = allowed.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    if (methods.has('GET')) methods.add('HEAD');
    allowed.set(route.url, methods);
  });
  const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const methods = allowed.get(pathOf(request));
    if (methods === undefined) return sendProblemFor(request, reply, notFound(request));
    const allow = [...methods].sort().join(', ');
    const detail = `${request.method} is not served at ${pathOf(request)}; it answers ${allow}.`;
    return sendProblemFor(request, reply.header('allow', allow), problem(405, 'method_not_allowed', detail));
  };
  app.setErrorHandler((error: FastifyError, request, reply) =>
    // No route: the body was read (and refused) before the not-found handler would have run, but
    // what is wrong is the address or the method, whatever the body.
    request.is404 && (error.statusCode ?? 500) < 500 ? noRoute(request, reply) : sendError(error, request, reply, bodyLimit),
  );
  app.setNotFoundHandler(noRoute);
}

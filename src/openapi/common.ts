// Building blocks of the OpenAPI document: the shapes it is written in, $refs into its components,
// the one way a schema with an `$id` becomes a component (the very objects the routes validate with,
// only the `$id` left out), and the problem+json and OAuth error responses every area shares.
import type { AuthUrls } from '../auth/urls.js';
import type { Config } from '../config.js';
import { PROBLEM_CONTENT_TYPE, problem } from '../http/problems.js';
import type { StudioProfile } from '../studio/profile.js';

export type Json = Record<string, unknown>;

/** A media-type map of one response or request body: `{ 'application/json': { schema, examples } }`. */
export type Content = Record<string, Json>;

export interface Response extends Json {
  readonly description: string;
  readonly headers?: Record<string, Json>;
  readonly content?: Content;
}

export interface Operation extends Json {
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly responses: Record<string, Response>;
}

export type PathItem = Partial<Record<'get' | 'post' | 'delete' | 'put' | 'patch', Operation>> & Json;

/** What the document is built from: configuration read at start-up, never a request. */
export interface AreaContext {
  readonly config: Config;
  readonly profile: StudioProfile;
  readonly urls: AuthUrls;
}

/** One area of the interface: its paths and the component schemas they refer to. */
export interface Area {
  readonly paths: Record<string, PathItem>;
  readonly schemas: Record<string, Json>;
}

export const JSON_TYPE = 'application/json';
export const PROBLEM_TYPE = PROBLEM_CONTENT_TYPE;
export const FORM_TYPE = 'application/x-www-form-urlencoded';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/**
 * A validating schema as an OpenAPI component, without its `$id` (which would start a new base URI
 * and break `#/components/...` references). A shallow copy: every nested schema is the very object
 * the route validates with.
 */
export function component<S extends { readonly $id: string }>(schema: S): Omit<S, '$id'> {
  const { $id: _id, ...rest } = schema;
  return rest;
}

/** A named example of a media type. */
export const example = (summary: string, value: unknown) => ({ summary, value });

/** Headers of a response that carries the route's RateLimit-* fields (draft-ietf-httpapi-ratelimit-headers). */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': headerRef('RateLimit-Limit'),
  'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
  'RateLimit-Reset': headerRef('RateLimit-Reset'),
} as const;

/** Discovery documents, auth.md, the server card, this document: readable from any origin, cached. */
export const PUBLIC_HEADERS = {
  'Cache-Control': headerRef('Cache-Control'),
  'Access-Control-Allow-Origin': headerRef('Access-Control-Allow-Origin'),
} as const;

export interface ProblemCase {
  /** The stable `error` code. */
  readonly error: string;
  /** A `detail` the service really sends for it (shown as the example). */
  readonly detail: string;
  readonly extra?: Json;
}

/**
 * An RFC 9457 problem+json response: the shared Problem schema narrowed to this status and these
 * `error` codes, with one example per code built by the same `problem()` the error handler uses.
 */
export function problemResponse(
  status: number,
  description: string,
  cases: readonly ProblemCase[],
  headers?: Record<string, Json>,
): Response {
  return {
    description,
    ...(headers && { headers }),
    content: { [PROBLEM_TYPE]: problemMedia(status, cases) },
  };
}

export function problemMedia(status: number, cases: readonly ProblemCase[]): Json {
  return {
    schema: {
      allOf: [ref('Problem')],
      properties: { status: { const: status }, error: { enum: [...new Set(cases.map((c) => c.error))] } },
    },
    examples: named(cases, (c) => problem(status, c.error, c.detail, c.extra)),
  };
}

/** An RFC 6749 §5.2 error response of /oauth/*: `{error, error_description}`, never cached. */
export function oauthErrorResponse(description: string, cases: readonly ProblemCase[], headers?: Record<string, Json>): Response {
  return {
    description,
    headers: { 'Cache-Control': headerRef('Cache-Control'), ...headers },
    content: {
      [JSON_TYPE]: {
        schema: { allOf: [ref('OAuthError')], properties: { error: { enum: [...new Set(cases.map((c) => c.error))] } } },
        examples: named(cases, (c) => ({ error: c.error, error_description: c.detail })),
      },
    },
  };
}

/** One example per case, keyed by its error code (numbered where a code has several). */
function named(cases: readonly ProblemCase[], value: (c: ProblemCase) => unknown): Record<string, Json> {
  const examples: Record<string, Json> = {};
  for (const c of cases) {
    let key = c.error;
    for (let n = 2; key in examples; n++) key = `${c.error}_${n}`;
    examples[key] = example(c.error, value(c));
  }
  return examples;
}

/** The 500 problem of a request that failed on the service's side: no details, only the request id. */
export const INTERNAL_ERROR: ProblemCase = {
  error: 'internal_error',
  detail: 'Something went wrong on our side. Please try again.',
  extra: { requestId: '5a0c2f4e-8d7b-4f7e-9d44-1c2b3a4d5e6f' },
};

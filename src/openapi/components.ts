// The components every area of the OpenAPI document shares: the error bodies (problem+json and the
// OAuth error JSON), the response headers that matter, the Idempotency-Key, Altcha, Honeypot and
// MCP-Protocol-Version request headers, and the optional bearer security scheme.
import { MCP_PROTOCOL_VERSIONS } from '../mcp/versions.js';
import type { Json } from './common.js';

/** RFC 9457 problem details as src/http/problems.ts writes them. */
const problemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'title', 'status', 'detail', 'error'],
  properties: {
    type: { type: 'string', const: 'about:blank', description: 'Always about:blank: `error` tells problems apart.' },
    title: { type: 'string', description: 'The HTTP status phrase.', examples: ['Bad Request'] },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong and what to do about it.' },
    error: { type: 'string', description: 'A stable, machine-readable code.', examples: ['invalid_request'] },
    errors: {
      type: 'array',
      description:
        'Validation problems only: each bad field once, the first 50 of them; where there were more, one last entry (pointer "") says how many were left off.',
      items: { $ref: '#/components/schemas/FieldError' },
    },
    requestId: { type: 'string', description: 'Server errors only: the X-Request-Id to quote when reporting it.' },
  },
} as const;

const fieldErrorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pointer', 'detail'],
  properties: {
    pointer: { type: 'string', description: 'RFC 6901 JSON Pointer into the request body ("" is the body itself).', examples: ['/email'] },
    detail: { type: 'string', examples: ['must be a valid email address, such as name@example.com'] },
  },
} as const;

/** RFC 6749 §5.2, as /oauth/* answers every error (server errors as `server_error`). */
const oauthErrorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['error', 'error_description'],
  properties: {
    error: { type: 'string', examples: ['invalid_grant'] },
    error_description: { type: 'string' },
  },
} as const;

export const sharedSchemas: Record<string, Json> = {
  Problem: problemSchema,
  FieldError: fieldErrorSchema,
  OAuthError: oauthErrorSchema,
};

const integerHeader = (description: string, example: number) => ({
  description,
  schema: { type: 'integer', minimum: 0, examples: [example] },
});

export const headers: Record<string, Json> = {
  'Retry-After': integerHeader('Seconds to wait before sending again (RFC 9110 §10.2.3).', 60),
  'RateLimit-Limit': integerHeader('Requests allowed per window from this client address.', 5),
  'RateLimit-Remaining': integerHeader('Requests left in the current window.', 4),
  'RateLimit-Reset': integerHeader('Seconds until the window resets.', 600),
  'WWW-Authenticate': {
    description:
      'Sent when a bearer token was given but is bad, expired, revoked or for another audience: the request was still served, ' +
      'anonymously (RFC 6750 §3.1, RFC 9728 §5.1).',
    schema: {
      type: 'string',
      examples: ['Bearer error="invalid_token", resource_metadata="https://studio.example/.well-known/oauth-protected-resource"'],
    },
  },
  'Idempotent-Replayed': {
    description: 'Present when the answer is a replay of an earlier request with the same Idempotency-Key and body.',
    schema: { type: 'string', const: 'true' },
  },
  'Inquiry-Outcome': {
    description:
      'What became of the inquiry: `created` (stored anew) or `duplicate` (the same email and message as one received in the last ' +
      "10 minutes: folded into it, answered with its reference, and this one's other fields not stored). A replay (the same " +
      'Idempotency-Key and body as an earlier request, marked `Idempotent-Replayed: true`) answers what that request was answered.',
    schema: { type: 'string', enum: ['created', 'duplicate'] },
  },
  'Cache-Control': { description: 'How long the response may be cached.', schema: { type: 'string', examples: ['public, max-age=3600'] } },
  'Access-Control-Allow-Origin': { description: 'Readable from any origin.', schema: { type: 'string', const: '*' } },
  Allow: { description: 'The methods this path answers.', schema: { type: 'string', const: 'POST' } },
  ETag: { description: 'Strong validator of the body; send it back in If-None-Match.', schema: { type: 'string' } },
};

export const parameters: Record<string, Json> = {
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes retries safe (draft-ietf-httpapi-idempotency-key-header): 1–255 visible ASCII characters, bare or as a quoted string, ' +
      'e.g. a UUID. The same key with the same body answers the same response (with `Idempotent-Replayed: true`) and is stored ' +
      'and delivered once, for 24 hours; the same key with another body answers 422. A malformed key answers 400. A retry ' +
      'with a key that has already answered does not count against the rate limit.',
    schema: { type: 'string', minLength: 1, maxLength: 257, examples: ['8e1f8a52-0d0c-4a4e-9f5e-1b6c1d0a9c77'] },
  },
  Altcha: {
    name: 'Altcha',
    in: 'header',
    required: false,
    description:
      'The contact page’s proof of work: base64 of ALTCHA’s JSON payload `{"challenge": {"parameters", "signature"}, "solution": ' +
      '{"counter", "derivedKey"}}` for a challenge from GET /api/contact/challenge. A valid one, fresh and not used before, lowers ' +
      'the inquiry’s spam score; an invalid, expired or replayed one raises it. Never refused, whatever it holds. Leave it out: ' +
      'agents and API clients never need one, and a missing proof counts neither way.',
    schema: { type: 'string', examples: ['eyJjaGFsbGVuZ2UiOnsicGFyYW1ldGVycyI6ey4uLn0sInNpZ25hdHVyZSI6Ii4uLiJ9LCJzb2x1dGlvbiI6ey4uLn19'] },
  },
  Honeypot: {
    name: 'Honeypot',
    in: 'header',
    required: false,
    description:
      'Sent by the contact page when its hidden field, which only bots see and fill, was filled in: any non-empty value ' +
      'quarantines the inquiry (answered as any other). Leave it out.',
    schema: { type: 'string', examples: ['filled'] },
  },
  'MCP-Protocol-Version': {
    name: 'MCP-Protocol-Version',
    in: 'header',
    required: false,
    description:
      "The MCP protocol version: 2026-07-28 on every request (with the same version in the request's _meta), or a 2025 " +
      'version after initialize. None is taken as 2025-03-26, the one version with JSON-RPC batches. An unsupported version answers 400.',
    schema: { type: 'string', enum: [...MCP_PROTOCOL_VERSIONS], examples: ['2026-07-28'] },
  },
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'An ETag from an earlier response: when it still matches, the answer is 304 without a body.',
    schema: { type: 'string' },
  },
};

export const securitySchemes: Record<string, Json> = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'Optional. An access token from POST /oauth/token (ES256 JWT, scope inquiry:write), in the Authorization header only. ' +
      'It attributes inquiries to the registered agent; it is never required, and a bad one never costs an inquiry.',
  },
};

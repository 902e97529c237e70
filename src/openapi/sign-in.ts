// The sign-in side of the OpenAPI document (docs/agent-auth.md, "Sign in with OAuth"): POST
// /oauth/register (RFC 7591), GET and POST /oauth/authorize (the consent page and its form) and the
// page's stylesheet. Served only where SMTP_URL is set, as the routes are.
import { AUTH_BODY_LIMIT_BYTES } from '../auth/limits.js';
import { clientMetadataSchema } from '../auth/oauth-schemas.js';
import {
  type Area,
  type AreaContext,
  component,
  example,
  FORM_TYPE,
  headerRef,
  JSON_TYPE,
  type Operation,
  oauthErrorResponse,
  RATE_LIMIT_HEADERS,
  type Response,
  ref,
} from './common.js';

const LIMIT_KIB = AUTH_BODY_LIMIT_BYTES / 1024;
const HTML = 'text/html';
const page = (description: string): Response => ({
  description,
  headers: { 'Cache-Control': headerRef('Cache-Control') },
  content: { [HTML]: { schema: { type: 'string' } } },
});
const tooMany = oauthErrorResponse(
  'Too many requests from this client address; wait Retry-After seconds.',
  [{ error: 'rate_limited', detail: 'Too many requests from this address; try again in 15 minutes.' }],
  { 'Retry-After': headerRef('Retry-After'), ...RATE_LIMIT_HEADERS },
);
const sentBack: Response = {
  description:
    'The person is sent back to the redirect URI: `code`, `state` and `iss` (RFC 9207) on approval; `error` (`access_denied` when ' +
    'they deny, or why the request is refused: `invalid_request`, `unsupported_response_type`, `invalid_scope`, `invalid_target`), ' +
    '`state` and `iss` otherwise.',
  headers: { Location: { description: 'The redirect URI with the response parameters.', schema: { type: 'string', format: 'uri' } } },
};

const registrationResponse = {
  type: 'object',
  additionalProperties: false,
  required: [
    'client_id',
    'client_id_issued_at',
    'client_name',
    'redirect_uris',
    'grant_types',
    'response_types',
    'token_endpoint_auth_method',
  ],
  properties: {
    client_id: { type: 'string', pattern: '^mcp_', description: 'The client identifier to send to /oauth/authorize and /oauth/token.' },
    client_id_issued_at: { type: 'integer' },
    client_name: { type: 'string' },
    client_uri: { type: 'string', format: 'uri' },
    redirect_uris: { type: 'array', minItems: 1, items: { type: 'string' } },
    grant_types: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] } },
    response_types: { type: 'array', items: { const: 'code' } },
    token_endpoint_auth_method: { const: 'none', description: 'Every client is public: PKCE protects its codes.' },
  },
} as const;

const consentForm = {
  type: 'object',
  required: ['request', 'action'],
  properties: {
    request: { type: 'string', description: 'The sign-in, from the page’s hidden field.' },
    action: { enum: ['send_code', 'approve', 'deny', 'restart'] },
    email: { type: 'string', format: 'email', description: 'With send_code: where the code is mailed.' },
    otp: { type: 'string', pattern: '^[0-9]{6}$', description: 'With approve: the code from the mail.' },
  },
} as const;

const query = (name: string, description: string, required = false, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});

export function signInArea({ urls }: AreaContext): Area {
  const registerClient: Operation = {
    operationId: 'registerOAuthClient',
    summary: 'Register an OAuth client (RFC 7591)',
    description:
      'Dynamic Client Registration for MCP hosts: a public client (no secret) with its exact redirect URIs, https or loopback http ' +
      '(RFC 8252). A client may instead use the https URL of its Client ID Metadata Document as its client_id, with no registration. ' +
      'Registrations unused for a while are deleted.',
    tags: ['Agent auth'],
    requestBody: {
      required: true,
      content: {
        [JSON_TYPE]: {
          schema: ref('OAuthClientMetadata'),
          examples: {
            host: example('An MCP host', { client_name: 'Desk agent', redirect_uris: ['http://127.0.0.1:8765/callback'] }),
          },
        },
      },
    },
    responses: {
      201: {
        description: 'Registered.',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: { [JSON_TYPE]: { schema: ref('OAuthClientRegistration') } },
      },
      400: oauthErrorResponse('RFC 7591 §3.2.2: the metadata or a redirect URI is not acceptable, or the body is not JSON.', [
        { error: 'invalid_client_metadata', detail: 'send the client metadata as JSON (RFC 7591 §3.1)' },
        { error: 'invalid_request', detail: 'send the parameters form-encoded or as JSON' },
        { error: 'invalid_redirect_uri', detail: 'redirect_uris: use https, or http on a loopback address' },
      ]),
      413: oauthErrorResponse(`The body is larger than ${LIMIT_KIB} KiB.`, [
        { error: 'payload_too_large', detail: `The request body is larger than ${LIMIT_KIB} KiB.` },
      ]),
      429: tooMany,
      500: oauthErrorResponse('The request failed on the service side; it may be sent again.', [
        { error: 'server_error', detail: 'Something went wrong on our side. Please try again.' },
      ]),
    },
  };

  const authorize: Operation = {
    operationId: 'authorize',
    summary: 'Start a sign-in (authorization code with PKCE)',
    description:
      'RFC 6749 §4.1 with PKCE (S256 only, required). A valid request shows the consent page: the client’s name and where the person ' +
      'is sent back, a field for their email address; a 6-digit code is mailed there, and the person approves or denies. A request ' +
      'whose client or redirect URI cannot be trusted shows a page saying so (the client learns nothing); any other bad request is ' +
      'sent back to the client with `error`.',
    tags: ['Agent auth'],
    parameters: [
      query('response_type', 'Always `code`.', true, { const: 'code' }),
      query('client_id', 'A registered client_id, or the https URL of a Client ID Metadata Document.', true),
      query('redirect_uri', 'Exactly as registered; may be left out where the client has only one.'),
      query('code_challenge', 'BASE64URL(SHA-256(code_verifier)), RFC 7636.', true, { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' }),
      query('code_challenge_method', 'Always `S256`.', true, { const: 'S256' }),
      query('state', 'Returned as given.'),
      query('resource', `RFC 8707: ${urls.resource} (default), ${urls.mcpResource} or ${urls.mcpVerifiedResource}.`, false, {
        type: 'string',
        format: 'uri',
      }),
      query('scope', 'The only scope is `inquiry:write` (the default).'),
    ],
    responses: {
      200: page('The consent page.'),
      303: sentBack,
      400: page('A page saying why the sign-in cannot go on (unknown client, a redirect URI it did not register).'),
      429: tooMany,
    },
  };

  const consent: Operation = {
    operationId: 'answerConsent',
    summary: 'The consent page’s form',
    description:
      'Posted by the consent page only (same origin, the browser’s sign-in cookie): `send_code` mails a code to `email`; `approve` ' +
      'with the code sends the person back with an authorization code; `deny` sends them back with `access_denied`. Codes last ' +
      '15 minutes; 5 wrong codes end the sign-in. The same caps on codes mailed apply as for claims.',
    tags: ['Agent auth'],
    requestBody: { required: true, content: { [FORM_TYPE]: { schema: ref('ConsentForm') } } },
    responses: {
      200: page('The page at its next step (enter the code), or the same step with what to fix.'),
      303: sentBack,
      400: page('A form from another site or browser, or a sign-in that has ended.'),
      413: oauthErrorResponse(`The body is larger than ${LIMIT_KIB} KiB.`, [
        { error: 'payload_too_large', detail: `The request body is larger than ${LIMIT_KIB} KiB.` },
      ]),
      429: tooMany,
    },
  };

  return {
    paths: {
      '/oauth/register': { post: registerClient },
      '/oauth/authorize': { get: authorize, post: consent },
      '/assets/consent.css': {
        get: {
          operationId: 'getConsentStylesheet',
          summary: 'The consent page’s stylesheet',
          tags: ['Agent auth'],
          responses: { 200: { description: 'CSS, cacheable for an hour.', content: { 'text/css': { schema: { type: 'string' } } } } },
        },
      },
    },
    schemas: {
      OAuthClientMetadata: component(clientMetadataSchema),
      OAuthClientRegistration: registrationResponse,
      ConsentForm: consentForm,
    },
  };
}

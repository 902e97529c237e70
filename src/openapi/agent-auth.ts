// The agent-auth side of the OpenAPI document (docs/agent-auth.md): POST /agent/register and
// /agent/claim (problem+json errors) and POST /oauth/token and /oauth/revoke (RFC 6749 §5.2 errors,
// form-encoded or JSON). Request bodies are the schema objects src/auth/service.ts validates with.
import { AUTH_BODY_LIMIT_BYTES } from '../auth/limits.js';
import {
  GRANT_TYPE_JWT_BEARER,
  GRANT_TYPE_TOKEN_EXCHANGE,
  INQUIRY_WRITE_SCOPE,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_JWT,
} from '../auth/metadata.js';
import { anonymousRegistrationSchema, claimSchema, idJagRegistrationSchema, verifiedEmailRegistrationSchema } from '../auth/schemas.js';
import { authSchemas, EXAMPLE_ASSERTION } from './agent-auth-schemas.js';
import {
  type Area,
  type AreaContext,
  component,
  example,
  FORM_TYPE,
  headerRef,
  INTERNAL_ERROR,
  JSON_TYPE,
  type Json,
  type Operation,
  oauthErrorResponse,
  type ProblemCase,
  problemResponse,
  RATE_LIMIT_HEADERS,
  type Response,
  ref,
} from './common.js';

const NO_STORE = { 'Cache-Control': headerRef('Cache-Control'), ...RATE_LIMIT_HEADERS };
const LIMIT_KIB = AUTH_BODY_LIMIT_BYTES / 1024;
const RATE_LIMITED: ProblemCase = { error: 'rate_limited', detail: 'Too many requests from this address; try again in 1 hour.' };
const TOO_LARGE: ProblemCase = { error: 'payload_too_large', detail: `The request body is larger than ${LIMIT_KIB} KiB.` };
const NOT_JSON: ProblemCase = {
  error: 'unsupported_media_type',
  detail: 'Send the request body as JSON with Content-Type: application/json.',
};
const INVALID_FIELDS: ProblemCase = {
  error: 'invalid_request',
  detail: 'The request has invalid fields; see errors for each one.',
  extra: { errors: [{ pointer: '/client_name', detail: 'is required' }] },
};
const INVALID_JSON: ProblemCase = { error: 'invalid_json', detail: 'The request body is not valid JSON.' };

/** The error responses /agent/* share, as problem+json. */
function agentErrors(): Record<string, Response> {
  return {
    413: problemResponse(413, `The body is larger than ${LIMIT_KIB} KiB.`, [TOO_LARGE]),
    415: problemResponse(415, 'The body is not JSON, or is JSON in a charset other than UTF-8.', [NOT_JSON]),
    429: problemResponse(
      429,
      'Too many requests from this client address, or too many codes mailed to that email address, to its domain, for that claim or by the service (SERVICE_MAIL_LIMIT per hour); wait Retry-After seconds.',
      [RATE_LIMITED],
      {
        'Retry-After': headerRef('Retry-After'),
        ...RATE_LIMIT_HEADERS,
      },
    ),
    500: problemResponse(500, 'The request failed on the service side; it may be sent again.', [INTERNAL_ERROR]),
  };
}

/** The wrong format is an invalid request on /oauth/* (RFC 6749 §5.2): no 415 there. */
const WRONG_FORMAT: ProblemCase = { error: 'invalid_request', detail: 'send the parameters form-encoded or as JSON' };

/** The error responses /oauth/* share, as RFC 6749 §5.2 JSON. */
function oauthErrors(): Record<string, Response> {
  return {
    413: oauthErrorResponse(`The body is larger than ${LIMIT_KIB} KiB.`, [TOO_LARGE]),
    429: oauthErrorResponse('Too many requests from this client address; wait Retry-After seconds.', [RATE_LIMITED], {
      'Retry-After': headerRef('Retry-After'),
      ...RATE_LIMIT_HEADERS,
    }),
    500: oauthErrorResponse('The request failed on the service side; it may be sent again.', [
      { error: 'server_error', detail: 'Something went wrong on our side. Please try again.' },
    ]),
  };
}

const json = (schema: Json, examples?: Record<string, Json>) => ({ [JSON_TYPE]: { schema, ...(examples && { examples }) } });
/** OAuth endpoints take their parameters form-encoded (RFC 6749 §4.5) or as a JSON object of strings. */
const formOrJson = (schema: Json, examples: Record<string, Json>) => ({
  [FORM_TYPE]: { schema, examples },
  [JSON_TYPE]: { schema, examples },
});

export function agentAuthArea({ urls }: AreaContext): Area {
  const registerAgent: Operation = {
    operationId: 'registerAgent',
    summary: 'Register an agent client',
    description:
      'Optional: puts a client identity on file so that the agent’s inquiries are attributed. `anonymous` and a trusted ID-JAG answer 201 ' +
      'with an identity assertion (a 30-day JWT to exchange at POST /oauth/token); `verified_email` answers 202 and mails a 6-digit code ' +
      'to complete at POST /agent/claim (offered only where the service sends email). The walk-through is at /auth.md.',
    tags: ['Agent auth'],
    requestBody: {
      required: true,
      content: json(
        { oneOf: [ref('AnonymousRegistration'), ref('VerifiedEmailRegistration'), ref('IdJagRegistration')] },
        {
          anonymous: example('Anonymous', { type: 'anonymous', client_name: 'Trip planner', client_uri: 'https://agent.example' }),
          verifiedEmail: example('Verified email', {
            type: 'identity_assertion',
            assertion_type: 'verified_email',
            email: 'owner@example.com',
            client_name: 'Owned agent',
          }),
          idJag: example('ID-JAG', { type: 'identity_assertion', assertion_type: TOKEN_TYPE_ID_JAG, assertion: EXAMPLE_ASSERTION }),
        },
      ),
    },
    responses: {
      201: {
        description:
          'Registered (`anonymous` or a trusted ID-JAG): the identity assertion, and with anonymous a claim where email is sent.',
        headers: NO_STORE,
        content: json(ref('Registration')),
      },
      202: {
        description: '`verified_email`: pending until the mailed code is given to POST /agent/claim.',
        headers: NO_STORE,
        content: json(ref('PendingRegistration')),
      },
      400: problemResponse(400, 'The registration is not valid; `error` says why.', [
        INVALID_FIELDS,
        INVALID_JSON,
        { error: 'unsupported_identity_type', detail: 'type must be "anonymous" or "identity_assertion"' },
        { error: 'unsupported_assertion_type', detail: `assertion_type must be "verified_email" or "${TOKEN_TYPE_ID_JAG}"` },
        { error: 'invalid_assertion', detail: 'the ID-JAG signature does not verify' },
        { error: 'issuer_not_enabled', detail: 'this issuer is not trusted here' },
        { error: 'replay_detected', detail: 'this ID-JAG has already been used' },
      ]),
      ...agentErrors(),
    },
  };

  const claimAgent: Operation = {
    operationId: 'claimAgent',
    summary: 'Claim a registration',
    description:
      'A person takes ownership of a registration with its claim token: `{claim_token, email}` mails a 6-digit code (202); ' +
      '`{claim_token, otp}` completes the claim (200, a new identity assertion). Codes last 15 minutes, are single use, and ' +
      '5 wrong codes end the claim.',
    tags: ['Agent auth'],
    requestBody: {
      required: true,
      content: json(ref('ClaimRequest'), {
        start: example('Start: mail a code', { claim_token: 'clm_x2mV…', email: 'person@example.com' }),
        complete: example('Complete with the code', { claim_token: 'clm_x2mV…', otp: '493021' }),
      }),
    },
    responses: {
      200: { description: 'Claimed: a new identity assertion for the owner.', headers: NO_STORE, content: json(ref('ClaimCompleted')) },
      202: { description: 'A code was mailed to the address.', headers: NO_STORE, content: json(ref('ClaimStarted')) },
      400: problemResponse(400, 'Invalid fields, or not exactly one of `email` and `otp`, or no code sent yet.', [
        INVALID_FIELDS,
        INVALID_JSON,
        { error: 'invalid_request', detail: 'send either email (to start the claim) or otp (to complete it), with claim_token' },
      ]),
      401: problemResponse(401, 'Unknown claim token, or a wrong code.', [
        { error: 'invalid_claim_token', detail: 'unknown claim_token' },
        { error: 'otp_invalid', detail: 'wrong code' },
      ]),
      409: problemResponse(409, 'Already claimed.', [
        { error: 'previously_claimed', detail: 'this registration has already been claimed' },
      ]),
      410: problemResponse(410, 'The claim or its code expired, or the claim ended after too many wrong codes.', [
        { error: 'claim_expired', detail: 'the code has expired: start the claim again to get a new one' },
      ]),
      ...agentErrors(),
    },
  };

  const requestToken: Operation = {
    operationId: 'requestToken',
    summary: 'Get an access token',
    description:
      `RFC 7523 jwt-bearer (\`assertion\`) or RFC 8693 token exchange (\`subject_token\`) with an identity assertion of this service or a ` +
      `trusted ID-JAG → a 1-hour ES256 access token (\`typ: at+jwt\`, scope \`${INQUIRY_WRITE_SCOPE}\`) for the resource ` +
      `${urls.resource} (default), ${urls.mcpResource} or ${urls.mcpVerifiedResource}. Where SMTP_URL is set, also the sign-in flow's ` +
      '`authorization_code` (with PKCE) and `refresh_token` grants (docs/agent-auth.md), which answer a refresh token too: rotated on ' +
      'every use, one used twice revokes the sign-in. A parameter sent twice is an invalid request.',
    tags: ['Agent auth'],
    requestBody: {
      required: true,
      content: formOrJson(ref('TokenRequest'), {
        jwtBearer: example('jwt-bearer', { grant_type: GRANT_TYPE_JWT_BEARER, assertion: EXAMPLE_ASSERTION }),
        tokenExchange: example('Token exchange for the MCP server', {
          grant_type: GRANT_TYPE_TOKEN_EXCHANGE,
          subject_token: EXAMPLE_ASSERTION,
          subject_token_type: TOKEN_TYPE_JWT,
          resource: urls.mcpResource,
        }),
      }),
    },
    responses: {
      200: {
        description: 'The access token. Never cached.',
        headers: NO_STORE,
        content: json(ref('TokenResponse'), {
          token: example('A token', {
            access_token: EXAMPLE_ASSERTION,
            token_type: 'Bearer',
            expires_in: 3600,
            scope: INQUIRY_WRITE_SCOPE,
          }),
        }),
      },
      400: oauthErrorResponse(
        'RFC 6749 §5.2 (and RFC 8707 `invalid_target` for an unknown `resource`); also a body that is neither form-encoded nor JSON.',
        [
          { error: 'invalid_request', detail: 'grant_type is required' },
          WRONG_FORMAT,
          { error: 'invalid_grant', detail: 'the assertion is not a valid, unexpired identity assertion of this service' },
          { error: 'unsupported_grant_type', detail: `grant_type must be ${GRANT_TYPE_JWT_BEARER} or ${GRANT_TYPE_TOKEN_EXCHANGE}` },
          { error: 'invalid_scope', detail: `the only scope is ${INQUIRY_WRITE_SCOPE}` },
          { error: 'invalid_target', detail: `resource must be ${urls.resource}, ${urls.mcpResource} or ${urls.mcpVerifiedResource}` },
        ],
      ),
      ...oauthErrors(),
    },
  };

  const revokeToken: Operation = {
    operationId: 'revokeToken',
    summary: 'Revoke a token',
    description:
      'RFC 7009: always 200 for a well-formed request, whether the token was valid, unknown or already revoked. Revoking an identity ' +
      'assertion ends the registration and every token minted from it; revoking a refresh token ends its sign-in.',
    tags: ['Agent auth'],
    requestBody: {
      required: true,
      content: formOrJson(ref('RevocationRequest'), { revoke: example('Revoke a token', { token: EXAMPLE_ASSERTION }) }),
    },
    responses: {
      200: { description: 'Revoked (or nothing to revoke). No body.', headers: NO_STORE },
      400: oauthErrorResponse(
        'No `token`, a parameter that is not a string or sent twice, or a body that is neither form-encoded nor JSON.',
        [{ error: 'invalid_request', detail: 'token is required' }, WRONG_FORMAT],
      ),
      ...oauthErrors(),
    },
  };

  return {
    paths: {
      '/agent/register': { post: registerAgent },
      '/agent/claim': { post: claimAgent },
      '/oauth/token': { post: requestToken },
      '/oauth/revoke': { post: revokeToken },
    },
    schemas: {
      AnonymousRegistration: component(anonymousRegistrationSchema),
      VerifiedEmailRegistration: component(verifiedEmailRegistrationSchema),
      IdJagRegistration: component(idJagRegistrationSchema),
      ClaimRequest: component(claimSchema),
      ...authSchemas(urls),
    },
  };
}

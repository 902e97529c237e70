// Response and OAuth request schemas of the agent-auth endpoints. The registration and claim request
// schemas are not here: they are the objects src/auth/service.ts validates with (see agent-auth.ts).
// The OAuth parameters are checked by hand in the service (form or JSON), so they are written here.
import {
  GRANT_TYPE_JWT_BEARER,
  GRANT_TYPE_TOKEN_EXCHANGE,
  INQUIRY_WRITE_SCOPE,
  TOKEN_TYPE_ACCESS_TOKEN,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_JWT,
} from '../auth/metadata.js';
import type { AuthUrls } from '../auth/urls.js';
import type { Json } from './common.js';

/** A shortened JWT for examples. */
export const EXAMPLE_ASSERTION = 'eyJhbGciOiJFUzI1NiIsImtpZCI6Ik…In0.eyJpc3MiOiJodHRwczovL3N0dWRpby5leGFtcGxlIiwi….MEUCIQ…';

const text = { type: 'string' } as const;
const jwt = { type: 'string', description: 'A compact JWT.' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const clientId = { type: 'string', pattern: '^agt_', examples: ['agt_j-hXtrPP4jI7DKBZ'] } as const;
const claimToken = { type: 'string', pattern: '^clm_', description: 'Shown once; keep it to claim the registration.' } as const;
const scopes = { type: 'array', items: { const: INQUIRY_WRITE_SCOPE } } as const;
/** OAuth parameters: strings only; unknown ones are ignored. */
const otherParams = { type: 'string' } as const;
const scopeParam = { type: 'string', description: `Space-separated; the only scope is ${INQUIRY_WRITE_SCOPE} (the default).` } as const;

const registration = {
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'client_name', 'registration_type', 'identity_assertion', 'identity_assertion_expires', 'scopes'],
  properties: {
    client_id: clientId,
    client_name: text,
    client_uri: { type: 'string', format: 'uri' },
    registration_type: { enum: ['anonymous', 'id-jag'] },
    email: {
      type: 'string',
      format: 'email',
      maxLength: 254,
      description:
        'ID-JAG only: the verified address, when the ID-JAG has an `email` claim that is one (as `verified_email` takes it); ' +
        'any other `email` claim is ignored.',
    },
    identity_assertion: { ...jwt, description: 'A 30-day JWT (aud = issuer) to exchange at POST /oauth/token.' },
    identity_assertion_expires: time,
    scopes,
    claim_token: claimToken,
    claim_token_expires: time,
    claim_uri: { type: 'string', format: 'uri' },
  },
  examples: [
    {
      client_id: 'agt_j-hXtrPP4jI7DKBZ',
      client_name: 'Trip planner',
      client_uri: 'https://agent.example',
      registration_type: 'anonymous',
      identity_assertion: EXAMPLE_ASSERTION,
      identity_assertion_expires: '2026-12-22T10:00:00.000Z',
      scopes: [INQUIRY_WRITE_SCOPE],
      claim_token: 'clm_x2mV…',
      claim_token_expires: '2026-11-29T10:00:00.000Z',
      claim_uri: 'https://studio.example/agent/claim',
    },
  ],
} as const;

const pendingRegistration = {
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'status', 'claim_token', 'claim_token_expires', 'claim_uri'],
  properties: {
    client_id: clientId,
    status: { const: 'pending' },
    claim_token: claimToken,
    claim_token_expires: time,
    claim_uri: { type: 'string', format: 'uri' },
  },
} as const;

const claimStarted = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { const: 'initiated' } },
} as const;

const claimCompleted = {
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'status', 'email', 'identity_assertion', 'identity_assertion_expires', 'scopes'],
  properties: {
    client_id: clientId,
    status: { const: 'claimed' },
    email: { type: 'string', format: 'email' },
    identity_assertion: jwt,
    identity_assertion_expires: time,
    scopes,
  },
} as const;

/** RFC 8707 `resource`: the three resources of this service, by their real addresses. */
const resourceParam = (urls: AuthUrls) =>
  ({
    type: 'string',
    format: 'uri',
    description: `RFC 8707: ${urls.resource} (the default), ${urls.mcpResource} or ${urls.mcpVerifiedResource} (this one needs a signed-in person).`,
  }) as const;

const jwtBearerRequest = (urls: AuthUrls) => ({
  type: 'object',
  required: ['grant_type', 'assertion'],
  properties: {
    grant_type: { const: GRANT_TYPE_JWT_BEARER },
    assertion: { ...jwt, description: 'An identity assertion of this service, or an ID-JAG of a trusted issuer.' },
    scope: scopeParam,
    resource: resourceParam(urls),
  },
  additionalProperties: otherParams,
});

const tokenExchangeRequest = (urls: AuthUrls) => ({
  type: 'object',
  required: ['grant_type', 'subject_token', 'subject_token_type'],
  properties: {
    grant_type: { const: GRANT_TYPE_TOKEN_EXCHANGE },
    subject_token: jwt,
    subject_token_type: { enum: [TOKEN_TYPE_JWT, TOKEN_TYPE_ID_JAG] },
    requested_token_type: { const: TOKEN_TYPE_ACCESS_TOKEN },
    scope: scopeParam,
    resource: resourceParam(urls),
  },
  additionalProperties: otherParams,
});

const authorizationCodeRequest = (urls: AuthUrls) => ({
  type: 'object',
  required: ['grant_type', 'code', 'client_id', 'redirect_uri', 'code_verifier'],
  properties: {
    grant_type: { const: 'authorization_code' },
    code: { type: 'string', description: 'From the redirect; single use, valid for 2 minutes.' },
    client_id: text,
    redirect_uri: { type: 'string', description: 'The one the code was issued for.' },
    code_verifier: { type: 'string', pattern: '^[A-Za-z0-9._~-]{43,128}$' },
    resource: { ...resourceParam(urls), description: 'If sent: the resource the sign-in was for.' },
  },
  additionalProperties: otherParams,
});

const refreshTokenRequest = (urls: AuthUrls) => ({
  type: 'object',
  required: ['grant_type', 'refresh_token', 'client_id'],
  properties: {
    grant_type: { const: 'refresh_token' },
    refresh_token: { type: 'string', pattern: '^rt_', description: 'Rotated on every use: one used twice ends the sign-in.' },
    client_id: text,
    scope: scopeParam,
    resource: { ...resourceParam(urls), description: 'If sent: the resource the sign-in was for.' },
  },
  additionalProperties: otherParams,
});

const tokenResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: { ...jwt, description: 'ES256, `typ: at+jwt`; send it as `Authorization: Bearer …`.' },
    token_type: { const: 'Bearer' },
    expires_in: { type: 'integer', const: 3600 },
    scope: { type: 'string', examples: [INQUIRY_WRITE_SCOPE] },
    issued_token_type: { const: TOKEN_TYPE_ACCESS_TOKEN, description: 'Token exchange only (RFC 8693 §2.2.1).' },
    refresh_token: { type: 'string', pattern: '^rt_', description: 'The sign-in grants only: the next refresh token (30 days).' },
  },
} as const;

const revocationRequest = {
  type: 'object',
  required: ['token'],
  properties: {
    token: { type: 'string', minLength: 1, description: 'An access token, an identity assertion or a refresh token.' },
    token_type_hint: { type: 'string', examples: ['access_token'] },
  },
  additionalProperties: otherParams,
} as const;

export const authSchemas = (urls: AuthUrls): Record<string, Json> => ({
  Registration: registration,
  PendingRegistration: pendingRegistration,
  ClaimStarted: claimStarted,
  ClaimCompleted: claimCompleted,
  TokenRequest: {
    oneOf: [
      { $ref: '#/components/schemas/JwtBearerTokenRequest' },
      { $ref: '#/components/schemas/TokenExchangeTokenRequest' },
      { $ref: '#/components/schemas/AuthorizationCodeTokenRequest' },
      { $ref: '#/components/schemas/RefreshTokenRequest' },
    ],
  },
  JwtBearerTokenRequest: jwtBearerRequest(urls),
  TokenExchangeTokenRequest: tokenExchangeRequest(urls),
  AuthorizationCodeTokenRequest: authorizationCodeRequest(urls),
  RefreshTokenRequest: refreshTokenRequest(urls),
  TokenResponse: tokenResponse,
  RevocationRequest: revocationRequest,
});

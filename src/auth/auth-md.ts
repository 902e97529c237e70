// The text of GET /auth.md (docs/agent-auth.md): a step-by-step walk-through for an agent
// developer, with curl lines that use this service's real URLs. Every address comes from AuthUrls,
// so the walk-through can never name a host or an endpoint the discovery documents do not.
import { confirmationText } from '../inquiries/confirmation.js';
import { CONTACT_BODY_LIMIT_BYTES, INQUIRY_LIMITS } from '../inquiries/schema.js';
import type { StudioProfile } from '../studio/profile.js';
import { signInSection } from './auth-md-sign-in.js';
import { OTP_MAX_FAILED_ATTEMPTS, OTP_TTL_MS } from './claims.js';
import {
  AUTH_BODY_LIMIT_BYTES,
  AUTH_RATE_LIMITS,
  CODES_PER_CLAIM,
  CODES_PER_DOMAIN,
  CODES_PER_RECIPIENT,
  DEFAULT_SERVICE_MAIL_PER_HOUR,
  describeLimit,
  describeSendLimits,
} from './limits.js';
import {
  type AuthFeatures,
  GRANT_TYPE_JWT_BEARER,
  GRANT_TYPE_TOKEN_EXCHANGE,
  INQUIRY_WRITE_SCOPE,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_JWT,
} from './metadata.js';
import { ACCESS_TOKEN_TTL_SECONDS, IDENTITY_ASSERTION_TTL_SECONDS } from './service.js';
import type { AuthUrls } from './urls.js';

// Figures the walk-through states, taken from the modules that enforce them.
const CONTACT_BODY_LIMIT_KIB = CONTACT_BODY_LIMIT_BYTES / 1024;
const AGENT_BODY_LIMIT_KIB = AUTH_BODY_LIMIT_BYTES / 1024;
const ACCESS_TOKEN_LIFETIME_SECONDS = ACCESS_TOKEN_TTL_SECONDS;
const IDENTITY_ASSERTION_LIFETIME_DAYS = IDENTITY_ASSERTION_TTL_SECONDS / 86_400;
const CLAIM_CODE_TTL_MINUTES = OTP_TTL_MS / 60_000;
const CLAIM_CODE_MAX_TRIES = OTP_MAX_FAILED_ATTEMPTS;
const DEFAULT_INQUIRY_RATE = '5 per 10 minutes';
const CODES_PER_ADDRESS_TEXT = describeSendLimits(CODES_PER_RECIPIENT);
const CODES_PER_CLAIM_TEXT = describeSendLimits(CODES_PER_CLAIM);
const CODES_PER_DOMAIN_TEXT = describeSendLimits(CODES_PER_DOMAIN);

const FENCE = '```';
const NO_EMAIL_NOTE =
  '> **This deployment sends no email.** Registration with `verified_email` and claims (sections 3b and 4) need a mailed code, so they are not available here: the metadata does not offer `verified_email`, and registrations get no `claim_token`.';
const NO_ID_JAG_NOTE =
  '> **This deployment trusts no identity provider yet.** Registration and tokens with an ID-JAG (section 3c) work once the operator lists its issuer in `TRUSTED_ISSUERS`; until then every ID-JAG is refused: `issuer_not_enabled` at `/agent/register`, `invalid_grant` at `/oauth/token`.';
const EXAMPLE_INQUIRY =
  '{"firstName":"Ada","lastName":"Lovelace","email":"ada@example.com","company":"Analytical Engines Ltd","message":"A new website, please."}';

/** The Markdown served at /auth.md. */
export function authMarkdown(
  urls: AuthUrls,
  profile: StudioProfile,
  { emailEnabled, idJagEnabled, serviceMailPerHour = DEFAULT_SERVICE_MAIL_PER_HOUR }: AuthFeatures = {
    emailEnabled: true,
    idJagEnabled: true,
  },
): string {
  const contact = `${urls.issuer}/api/contact`;
  return [
    `# auth.md — ${profile.name}`,
    intro(urls, profile, contact),
    inquiries(profile, contact),
    discovery(urls),
    ...(emailEnabled ? [signInSection(urls)] : []),
    registration(urls),
    ...(emailEnabled ? [] : [NO_EMAIL_NOTE]),
    ...(idJagEnabled ? [] : [NO_ID_JAG_NOTE]),
    claim(urls, serviceMailPerHour),
    token(urls),
    bearerUse(urls, contact),
    revocation(urls),
    limits(serviceMailPerHour),
    errorTable(),
  ].join('\n\n');
}

const intro = (
  urls: AuthUrls,
  profile: StudioProfile,
  contact: string,
) => `This page tells an AI agent how to send project inquiries to ${profile.name}, and how to register and use a token if it wants to.
Base URL: \`${urls.issuer}\`. Every URL below is real. Copy the curl lines as they are.

1. Inquiries need no auth: \`POST ${contact}\` (section 1).
2. Registration is optional. It only attributes your inquiries to your agent (\`client_id\`). It changes nothing else.
3. To attribute inquiries: register (3), optionally let a person claim the registration (4), get a token (5), send it (6).`;

const inquiries = (profile: StudioProfile, contact: string) => `## 1. Send an inquiry (no auth)

1. POST the inquiry as JSON to \`${contact}\`.
2. Add an \`Idempotency-Key\` header (a UUID is fine). A retry with the same key and body is stored once.
3. Read the \`200\` \`text/plain\` answer. It holds the inquiry's reference.

${FENCE}sh
curl -s ${contact} \\
  -H 'content-type: application/json' \\
  -H 'idempotency-key: 6f1c2b8e-4a57-4a0e-9d0e-2f3c9b7a1d42' \\
  -d '${EXAMPLE_INQUIRY}'
${FENCE}

Fields (a JSON object; any other property is a 400; lengths count Unicode code points):

| field | required | rule |
|---|---|---|
| \`firstName\` | yes | string, 1–${INQUIRY_LIMITS.nameMaxLength} characters, not only whitespace |
| \`lastName\` | yes | string, 1–${INQUIRY_LIMITS.nameMaxLength} characters, not only whitespace |
| \`email\` | yes | string, an email address, at most ${INQUIRY_LIMITS.emailMaxLength} characters |
| \`company\` | no | string, at most ${INQUIRY_LIMITS.companyMaxLength} characters |
| \`message\` | yes | string, 1–${INQUIRY_LIMITS.messageMaxLength} characters, not only whitespace |

Answer \`200\`, \`text/plain; charset=utf-8\`:

${FENCE}text
${confirmationText(profile, 'INQ-7K2M9Q')}
${FENCE}

- \`Idempotency-Key\`: 1–255 visible ASCII characters, no spaces or double quotes (one header, the key bare or in quotes). The same key with the same body answers the same response, with \`Idempotent-Replayed: true\`, for 24 hours. The same key with another body answers 422.
- With or without a key, the same email and message within 10 minutes fold into the first inquiry (same reference); only the first is stored, with the names, company and client it came with.

Errors are \`application/problem+json\` (RFC 9457). \`errors\` appears on validation errors only:

${FENCE}json
{"type":"about:blank","title":"Bad Request","status":400,"detail":"The request has invalid fields; see errors for each one.",
 "error":"invalid_request","errors":[{"pointer":"/email","detail":"must be a valid email address, such as name@example.com"}]}
${FENCE}

| status | \`error\` | meaning |
|---|---|---|
| 400 | \`invalid_request\`, \`invalid_json\`, \`invalid_idempotency_key\` | bad fields (see \`errors\`), bad JSON, malformed key |
| 413 | \`payload_too_large\` | body above ${CONTACT_BODY_LIMIT_KIB} KiB |
| 415 | \`unsupported_media_type\` | the body is not \`application/json\` in UTF-8 |
| 422 | \`idempotency_key_reused\` | the key was used with another body |
| 429 | \`rate_limited\` | too many inquiries; wait \`Retry-After\` seconds |
| 500 | \`inquiry_not_stored\`, \`internal_error\` | nothing was stored; retry with the same key |`;

const discovery = (urls: AuthUrls) => `## 2. Discover

All documents: \`GET\`, \`application/json\`, \`Access-Control-Allow-Origin: *\`, cacheable.

| document | URL |
|---|---|
| protected resource metadata, API (RFC 9728) | \`${urls.protectedResourceMetadata}\` |
| protected resource metadata, MCP (RFC 9728) | \`${urls.mcpProtectedResourceMetadata}\` |
| authorization server metadata (RFC 8414) | \`${urls.authorizationServerMetadata}\` |
| protected resource metadata, MCP for signed-in people (RFC 9728) | \`${urls.mcpVerifiedProtectedResourceMetadata}\` |
| JWKS (ES256 public keys) | \`${urls.jwksUri}\` |

${FENCE}sh
curl -s ${urls.protectedResourceMetadata}
curl -s ${urls.authorizationServerMetadata}
${FENCE}

1. The protected resource metadata names the resource (\`${urls.resource}\` or \`${urls.mcpResource}\`) and \`authorization_servers\`: \`["${urls.issuer}"]\`.
2. The authorization server metadata has \`issuer\` (\`${urls.issuer}\`), \`token_endpoint\`, \`jwks_uri\`, \`revocation_endpoint\` and the \`agent_auth\` block (\`register_uri\`, \`claim_uri\`, \`revocation_uri\`, identity types).`;

const registration = (urls: AuthUrls) => `## 3. Register (optional)

\`POST ${urls.registerUri}\`, JSON. Use one of three forms. \`client_uri\` is stored as given; the service never fetches it.

### 3a. Anonymous

${FENCE}sh
curl -s ${urls.registerUri} \\
  -H 'content-type: application/json' \\
  -d '{"type":"anonymous","client_name":"Trip planner agent","client_uri":"https://agent.example"}'
${FENCE}

Answer \`201 Created\`:

${FENCE}json
{"client_id":"…","client_name":"Trip planner agent","client_uri":"https://agent.example","registration_type":"anonymous",
 "identity_assertion":"eyJ…","identity_assertion_expires":"…","scopes":["${INQUIRY_WRITE_SCOPE}"],
 "claim_token":"…","claim_token_expires":"…","claim_uri":"${urls.claimUri}"}
${FENCE}

1. Keep \`identity_assertion\`. It is your credential: a JWT this service signs, \`sub\` = \`client_id\`, \`aud\` = \`${urls.issuer}\`, valid ${IDENTITY_ASSERTION_LIFETIME_DAYS} days (until \`identity_assertion_expires\`).
2. Keep \`claim_token\` if a person should own this registration (section 4). It is shown once; the service stores only its hash. It works until \`claim_token_expires\`.
3. In your shell: \`IDENTITY_ASSERTION='…'\` and \`CLAIM_TOKEN='…'\`. The examples below use them.

### 3b. Verified email

${FENCE}sh
curl -s ${urls.registerUri} \\
  -H 'content-type: application/json' \\
  -d '{"type":"identity_assertion","assertion_type":"verified_email","email":"owner@example.com","client_name":"Trip planner agent"}'
${FENCE}

Answer \`202 Accepted\`: \`{"client_id":"…","status":"pending","claim_token":"…","claim_token_expires":"…","claim_uri":"${urls.claimUri}"}\`

1. The service emails a 6-digit code to that address (within the limits on codes mailed, section 4).
2. There is no credential yet. Complete the claim with that code (section 4, step "Complete"). The answer holds the \`identity_assertion\`.

### 3c. ID-JAG (identity assertion from a trusted identity provider)

1. Get an ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant) from your identity provider: header \`typ: oauth-id-jag+jwt\`; claims \`iss\`, \`sub\`, \`aud\` = \`${urls.issuer}\`, \`client_id\`, \`jti\`, \`exp\`, \`iat\` (optional \`email\`, \`scope\`, \`resource\`, \`auth_time\`).
2. The issuer must be listed in the service's \`TRUSTED_ISSUERS\`. Otherwise the answer is \`issuer_not_enabled\`.
3. Each \`jti\` is accepted once.
4. In your shell: \`ID_JAG='…'\`.

${FENCE}sh
curl -s ${urls.registerUri} \\
  -H 'content-type: application/json' \\
  -d '{"type":"identity_assertion","assertion_type":"${TOKEN_TYPE_ID_JAG}","assertion":"'"$ID_JAG"'","client_name":"Trip planner agent"}'
${FENCE}

Answer \`201 Created\` with the same fields as 3a, \`registration_type\` \`"id-jag"\`; the verified \`email\` and \`sub\` are kept on file.

Errors: \`400\` problem+json with \`error\` \`invalid_request\`, \`unsupported_identity_type\`, \`unsupported_assertion_type\`, \`invalid_assertion\`, \`issuer_not_enabled\` or \`replay_detected\`; \`429\` \`rate_limited\`. Meanings: section 9.`;

const claim = (urls: AuthUrls, serviceMailPerHour: number) => `## 4. Claim (a person takes ownership)

\`POST ${urls.claimUri}\`, JSON. Codes have 6 digits, expire after ${CLAIM_CODE_TTL_MINUTES} minutes and work once. ${CLAIM_CODE_MAX_TRIES} wrong codes end the claim.

Codes mailed are limited, whoever asks and from wherever: to one mailbox (case, surrounding spaces, a \`+tag\` after the local part and, at gmail.com and googlemail.com, dots in it aside) ${CODES_PER_ADDRESS_TEXT}; to one domain, whichever of its addresses, ${CODES_PER_DOMAIN_TEXT}; for one claim ${CODES_PER_CLAIM_TEXT}; by this service, to anyone, ${serviceMailPerHour} per 1 h. Beyond that the answer is \`429\` \`rate_limited\` with \`Retry-After\` (seconds), and nothing is mailed: a claim keeps its last code, and a verified-email registration (section 3b) is not made, so send it again after the wait.

### Start (anonymous registrations)

A verified-email registration skips this step: its code was sent at registration.

${FENCE}sh
curl -s ${urls.claimUri} \\
  -H 'content-type: application/json' \\
  -d '{"claim_token":"'"$CLAIM_TOKEN"'","email":"owner@example.com"}'
${FENCE}

Answer \`202\` \`{"status":"initiated"}\`. The service emails a 6-digit code to that address.

### Complete

${FENCE}sh
curl -s ${urls.claimUri} \\
  -H 'content-type: application/json' \\
  -d '{"claim_token":"'"$CLAIM_TOKEN"'","otp":"123456"}'
${FENCE}

Answer \`200\`: \`{"client_id":"…","status":"claimed","email":"owner@example.com","identity_assertion":"eyJ…",…}\`. Use this \`identity_assertion\` from now on.

Errors (problem+json with \`error\`): \`401\` \`invalid_claim_token\` or \`otp_invalid\`, \`410\` \`claim_expired\`, \`409\` \`previously_claimed\`, \`429\` \`rate_limited\`. Meanings: section 9.`;

const token = (urls: AuthUrls) => `## 5. Get an access token

\`POST ${urls.tokenEndpoint}\`, form-encoded (\`application/x-www-form-urlencoded\`); JSON is accepted too. No client authentication. Use either grant.

### JWT bearer grant (RFC 7523)

${FENCE}sh
curl -s ${urls.tokenEndpoint} \\
  --data-urlencode 'grant_type=${GRANT_TYPE_JWT_BEARER}' \\
  --data-urlencode "assertion=$IDENTITY_ASSERTION" \\
  --data-urlencode 'scope=${INQUIRY_WRITE_SCOPE}' \\
  --data-urlencode 'resource=${urls.resource}'
${FENCE}

### Token exchange (RFC 8693)

${FENCE}sh
curl -s ${urls.tokenEndpoint} \\
  --data-urlencode 'grant_type=${GRANT_TYPE_TOKEN_EXCHANGE}' \\
  --data-urlencode "subject_token=$IDENTITY_ASSERTION" \\
  --data-urlencode 'subject_token_type=${TOKEN_TYPE_JWT}'
${FENCE}

1. \`assertion\` / \`subject_token\`: the \`identity_assertion\` from section 3 or 4, or an ID-JAG from a trusted issuer (then \`subject_token_type=${TOKEN_TYPE_ID_JAG}\`).
2. \`scope\` (optional): \`${INQUIRY_WRITE_SCOPE}\`, the only scope and the default.
3. \`resource\` (optional): \`${urls.resource}\` (the API) or \`${urls.mcpResource}\` (the MCP server); the default is the API. It becomes the token's \`aud\`. Another value answers \`invalid_target\`.

Answer \`200\`, \`Cache-Control: no-store\`: \`{"access_token":"eyJ…","token_type":"Bearer","expires_in":${ACCESS_TOKEN_LIFETIME_SECONDS},"scope":"${INQUIRY_WRITE_SCOPE}"}\`.
Token exchange also returns \`issued_token_type\` (RFC 8693). In your shell: \`ACCESS_TOKEN='…'\` (the \`access_token\`).

The access token is an ES256 JWT (header \`typ: at+jwt\`, \`kid\`) with \`iss\` (\`${urls.issuer}\`), \`aud\` (the resource), \`sub\` (= \`client_id\`), \`client_id\`, \`scope\`, \`jti\`, \`iat\` and \`exp\`. Verify it with \`${urls.jwksUri}\`. It lasts ${ACCESS_TOKEN_LIFETIME_SECONDS} seconds; then get a new one the same way.

Errors (RFC 6749 §5.2): \`400\`, \`Cache-Control: no-store\`, body \`{"error":"…","error_description":"…"}\` with \`invalid_request\`, \`invalid_grant\`, \`unsupported_grant_type\`, \`invalid_scope\` or \`invalid_target\` (section 9). Too many requests from your IP answer \`429\` with \`Retry-After\`.`;

const bearerUse = (urls: AuthUrls, contact: string) => `## 6. Use the token

Send it in the \`Authorization\` header only (not in the body or the query).

${FENCE}sh
curl -s -i ${contact} \\
  -H 'content-type: application/json' \\
  -H "authorization: Bearer $ACCESS_TOKEN" \\
  -d '${EXAMPLE_INQUIRY}'
${FENCE}

1. A valid token with \`${INQUIRY_WRITE_SCOPE}\`: the inquiry is attributed to your \`client_id\`. The studio sees it in its email and webhook.
2. No token: the inquiry is accepted as anonymous.
3. A bad, expired or revoked token never loses the inquiry. It is accepted as anonymous (\`200\`), and the answer carries:
   \`WWW-Authenticate: Bearer error="invalid_token", resource_metadata="${urls.protectedResourceMetadata}"\`
   Do not send the inquiry again: it is stored. Get a new token (section 5) for the next one.
4. The MCP server at \`${urls.mcpResource}\` takes the same header. Ask for \`resource=${urls.mcpResource}\`; its metadata is \`${urls.mcpProtectedResourceMetadata}\`.`;

const revocation = (urls: AuthUrls) => `## 7. Revoke

\`POST ${urls.revocationEndpoint}\` with \`token\` and an optional \`token_type_hint\`; form-encoded or JSON.

${FENCE}sh
curl -s -i ${urls.revocationEndpoint} \\
  --data-urlencode "token=$ACCESS_TOKEN" \\
  --data-urlencode 'token_type_hint=access_token'
curl -s -i ${urls.revocationEndpoint} \\
  -H 'content-type: application/json' \\
  -d '{"token":"'"$IDENTITY_ASSERTION"'"}'
${FENCE}

1. A well-formed request always answers \`200\`, also for an unknown or already revoked token (RFC 7009 §2.2), so tokens cannot be guessed.
2. Revoking an access token ends that token.
3. Revoking the identity assertion ends the registration and every token made from it.
4. Revocation is stored: it holds across restarts.
5. A request without \`token\` answers \`400\` \`{"error":"invalid_request",…}\`.`;

const limits = (serviceMailPerHour: number) => `## 8. Limits

| what | limit |
|---|---|
| request body, \`/agent/*\` and \`/oauth/*\` | ${AGENT_BODY_LIMIT_KIB} KiB (413 \`payload_too_large\` above) |
| request body, \`/api/contact\` | ${CONTACT_BODY_LIMIT_KIB} KiB (413 \`payload_too_large\` above) |
| register, claim, token, revoke | per client IP: register ${describeLimit(AUTH_RATE_LIMITS.register)}, claim ${describeLimit(AUTH_RATE_LIMITS.claim)}, token ${describeLimit(AUTH_RATE_LIMITS.token)}, revoke ${describeLimit(AUTH_RATE_LIMITS.revoke)}; beyond that \`429\` with \`Retry-After\` (seconds) |
| inquiries | \`RATE_LIMIT_INQUIRIES\` per client IP, default ${DEFAULT_INQUIRY_RATE}, one allowance for \`POST /api/contact\` and the MCP tool \`submit_inquiry\` together; only well-formed inquiries count, and not a retry whose Idempotency-Key has already answered; \`429\` with \`Retry-After\` and \`RateLimit-*\` headers (MCP: a tool error giving the seconds to wait) |
| access token | ${ACCESS_TOKEN_LIFETIME_SECONDS} seconds |
| identity assertion | ${IDENTITY_ASSERTION_LIFETIME_DAYS} days |
| claim code | 6 digits, ${CLAIM_CODE_TTL_MINUTES} minutes, single use, ${CLAIM_CODE_MAX_TRIES} wrong tries end the claim |
| claim codes mailed | per email address, from any IP and registration: ${CODES_PER_ADDRESS_TEXT}; per domain: ${CODES_PER_DOMAIN_TEXT}; per claim: ${CODES_PER_CLAIM_TEXT}; by the whole service: ${serviceMailPerHour} per 1 h; beyond that \`429\` \`rate_limited\` with \`Retry-After\`, nothing mailed |
| \`Idempotency-Key\` | remembered 24 hours |

On \`429\`, wait \`Retry-After\` seconds before the next request.`;

const errorTable = () => `## 9. Error codes

| \`error\` | status | endpoint | meaning |
|---|---|---|---|
| \`invalid_request\` | 400 | /api/contact, /agent/register, /agent/claim, /oauth/token, /oauth/revoke | a field or parameter is missing, repeated or malformed (see \`errors\` on problem+json) |
| \`invalid_json\` | 400 | /api/contact | the body is not valid JSON |
| \`invalid_idempotency_key\` | 400 | /api/contact | the \`Idempotency-Key\` header is malformed |
| \`payload_too_large\` | 413 | /api/contact, /agent/*, /oauth/* | the body is above the limit (section 8) |
| \`unsupported_media_type\` | 415 | /api/contact, /agent/*, /mcp | the body is not \`application/json\` in UTF-8 |
| \`idempotency_key_reused\` | 422 | /api/contact | the key was used with another body |
| \`inquiry_not_stored\` | 500 | /api/contact | nothing was stored; retry with the same key |
| \`internal_error\` | 500 | /api/contact, /agent/register, /agent/claim | something failed on the server; retry later |
| \`unsupported_identity_type\` | 400 | /agent/register | \`type\` is not \`anonymous\` or \`identity_assertion\` |
| \`unsupported_assertion_type\` | 400 | /agent/register | \`assertion_type\` is not \`verified_email\` or \`${TOKEN_TYPE_ID_JAG}\` |
| \`invalid_assertion\` | 400 | /agent/register | the ID-JAG's signature, \`typ\`, \`aud\` or \`exp\` is wrong |
| \`issuer_not_enabled\` | 400 | /agent/register | the ID-JAG's issuer is not in \`TRUSTED_ISSUERS\` |
| \`replay_detected\` | 400 | /agent/register | the ID-JAG's \`jti\` was already used |
| \`invalid_claim_token\` | 401 | /agent/claim | the claim token is unknown |
| \`otp_invalid\` | 401 | /agent/claim | the code is wrong |
| \`previously_claimed\` | 409 | /agent/claim | the registration is already claimed |
| \`claim_expired\` | 410 | /agent/claim | the claim has expired or was ended; it cannot complete |
| \`invalid_grant\` | 400 | /oauth/token | the assertion or subject token is invalid, expired, revoked or from an untrusted issuer |
| \`unsupported_grant_type\` | 400 | /oauth/token | \`grant_type\` is neither of the two in section 5 |
| \`invalid_target\` | 400 | /oauth/token | \`resource\` is not the API or one of the MCP servers (RFC 8707) |
| \`invalid_scope\` | 400 | /oauth/token | \`scope\` names a scope other than \`${INQUIRY_WRITE_SCOPE}\` |
| \`rate_limited\` | 429 | /api/contact, /agent/register, /agent/claim, /oauth/token, /oauth/revoke | too many requests from your IP, or (register with \`verified_email\`, claim) too many codes mailed to that address, to its domain, for that claim or by the service; wait \`Retry-After\` seconds |
| \`invalid_token\` | 200 (inquiry accepted as anonymous) | /api/contact, /mcp: in \`WWW-Authenticate\` | the bearer token is bad, expired or revoked; get a new one |
| \`sign_in_required\` | 401 | /mcp/verified | no access token of a signed-in person: sign in with OAuth (\`WWW-Authenticate\` names the metadata) or use /mcp |
`;

// The section of /auth.md on the second way in: a person signs in through a standard OAuth client
// (the MCP authorization flow), with no code written for this service.
import { AUTHORIZATION_CODE_TTL_MS, CONSENT_TTL_MS } from './authorization.js';
import { REFRESH_TOKEN_TTL_MS } from './oauth-tokens.js';
import type { AuthUrls } from './urls.js';

const FENCE = '```';
const DAYS = (ms: number) => ms / (24 * 60 * 60 * 1000);

export const signInSection = (urls: AuthUrls) => `## Sign a person in (OAuth, for standard MCP clients)

Any OAuth 2.1 client that follows the MCP authorization spec signs a person in without code written for this service: it reads the metadata above, registers, and opens the authorization endpoint in the person's browser.

1. **Register**: \`POST ${urls.registrationEndpoint}\` (RFC 7591, JSON: \`redirect_uris\` https, or http to a loopback address; \`client_name\`) → 201 with a \`client_id\` (a public client: \`token_endpoint_auth_method\` \`none\`). Or use an https \`client_id\` URL serving a Client ID Metadata Document (\`client_id\`, \`client_name\`, \`redirect_uris\`), which the service fetches from public addresses only, at most 5 KiB, and caches for 5 minutes.
2. **Authorize**: open \`${urls.authorizationEndpoint}\` in the person's browser with the query \`response_type=code\`, \`client_id\`, \`redirect_uri\`, \`code_challenge\`, \`code_challenge_method=S256\`, \`state\` and \`resource\`. PKCE with S256 is required; \`resource\` is \`${urls.resource}\`, \`${urls.mcpResource}\` or \`${urls.mcpVerifiedResource}\` (default the first). The page shows the client's name and where it sends the person back, mails a 6-digit code to the address they give, and they approve or deny. The page is open for ${CONSENT_TTL_MS / 60_000} minutes.
3. **Back at the redirect URI**: \`code\`, \`state\` and \`iss\` (\`${urls.issuer}\`, RFC 9207), or \`error=access_denied\`. The code is single-use and lasts ${AUTHORIZATION_CODE_TTL_MS / 60_000} minutes.
4. **Token**: \`POST ${urls.tokenEndpoint}\` with \`grant_type=authorization_code\`, \`code\`, \`redirect_uri\`, \`client_id\`, \`code_verifier\` → \`access_token\` (carrying the verified \`email\`), \`refresh_token\`.
5. **Refresh**: \`grant_type=refresh_token\`, \`refresh_token\`, \`client_id\`. Each refresh token works once and comes with the next; one used twice ends the sign-in. A sign-in lasts while it is refreshed at least every ${DAYS(REFRESH_TOKEN_TTL_MS)} days. \`POST ${urls.revocationEndpoint}\` with the refresh token ends it.

${FENCE}sh
curl -s -X POST ${urls.registrationEndpoint} -H 'content-type: application/json' \\
  -d '{"client_name":"My agent","redirect_uris":["http://127.0.0.1:8976/callback"]}'
${FENCE}

Inquiries sent with such a token are attributed to the person's verified address.

**The MCP server for signed-in people**: \`${urls.mcpVerifiedResource}\` serves the same tools as \`${urls.mcpResource}\` and requires such a sign-in. Without an access token for it (\`resource=${urls.mcpVerifiedResource}\`) it answers 401 with \`WWW-Authenticate: Bearer resource_metadata="${urls.mcpVerifiedProtectedResourceMetadata}"\`, which is where a standard MCP client starts the steps above on its own. \`${urls.mcpResource}\` stays open to every agent.`;

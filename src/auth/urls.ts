// Every address the agent-auth surface publishes, built once from PUBLIC_URL, so the discovery
// documents, tokens and auth.md can never disagree (docs/agent-auth.md: issuer = B, resource = B/).

export interface AuthUrls {
  /** B: PUBLIC_URL without a trailing slash; the authorization server's issuer identifier. */
  readonly issuer: string;
  /** B/: the protected resource (RFC 9728), the audience of access tokens. */
  readonly resource: string;
  /** B/mcp: the tool server, a second resource. */
  readonly mcpResource: string;
  /** B/mcp/verified: the tool server that requires a signed-in person. */
  readonly mcpVerifiedResource: string;
  readonly tokenEndpoint: string;
  readonly revocationEndpoint: string;
  /** The authorization-code flow's endpoints (RFC 6749 §3.1, RFC 7591 §3). */
  readonly authorizationEndpoint: string;
  readonly registrationEndpoint: string;
  readonly jwksUri: string;
  readonly registerUri: string;
  readonly claimUri: string;
  /** B/auth.md: the agent-facing walk-through. */
  readonly authMd: string;
  readonly protectedResourceMetadata: string;
  readonly mcpProtectedResourceMetadata: string;
  readonly mcpVerifiedProtectedResourceMetadata: string;
  readonly authorizationServerMetadata: string;
}

export function authUrls(publicUrl: string): AuthUrls {
  const base = publicUrl.replace(/\/+$/, '');
  return Object.freeze({
    issuer: base,
    resource: `${base}/`,
    mcpResource: `${base}/mcp`,
    mcpVerifiedResource: `${base}/mcp/verified`,
    tokenEndpoint: `${base}/oauth/token`,
    revocationEndpoint: `${base}/oauth/revoke`,
    authorizationEndpoint: `${base}/oauth/authorize`,
    registrationEndpoint: `${base}/oauth/register`,
    jwksUri: `${base}/.well-known/jwks.json`,
    registerUri: `${base}/agent/register`,
    claimUri: `${base}/agent/claim`,
    authMd: `${base}/auth.md`,
    protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource`,
    mcpProtectedResourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp`,
    mcpVerifiedProtectedResourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp/verified`,
    authorizationServerMetadata: `${base}/.well-known/oauth-authorization-server`,
  });
}

/**
 * The path of PUBLIC_URL without a trailing slash: '' for a service at the root of its host,
 * '/inquiry' for one a proxy serves under https://host/inquiry/ (stripping that prefix before it
 * reaches the service). Links in pages start with it, so they resolve wherever the page is served.
 */
export function basePath(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

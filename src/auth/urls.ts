// Every address the agent-auth surface publishes, built once from PUBLIC_URL, so the discovery
// documents, tokens and auth.md can never disagree (docs/agent-auth.md: issuer = B, resource = B/).

export interface AuthUrls {
  /** B: PUBLIC_URL without a trailing slash; the authorization server's issuer identifier. */
  readonly issuer: string;
  /** B/: the protected resource (RFC 9728), the audience of access tokens. */
  readonly resource: string;
  /** B/mcp: the tool server, a second resource. */
  readonly mcpResource: string;
  readonly tokenEndpoint: string;
  readonly revocationEndpoint: string;
  readonly jwksUri: string;
  readonly registerUri: string;
  readonly claimUri: string;
  /** B/auth.md: the agent-facing walk-through. */
  readonly authMd: string;
  readonly protectedResourceMetadata: string;
  readonly mcpProtectedResourceMetadata: string;
  readonly authorizationServerMetadata: string;
}

export function authUrls(publicUrl: string): AuthUrls {
  const base = publicUrl.replace(/\/+$/, '');
  return Object.freeze({
    issuer: base,
    resource: `${base}/`,
    mcpResource: `${base}/mcp`,
    tokenEndpoint: `${base}/oauth/token`,
    revocationEndpoint: `${base}/oauth/revoke`,
    jwksUri: `${base}/.well-known/jwks.json`,
    registerUri: `${base}/agent/register`,
    claimUri: `${base}/agent/claim`,
    authMd: `${base}/auth.md`,
    protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource`,
    mcpProtectedResourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp`,
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

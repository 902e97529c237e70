// The resources (RFC 8707) a token may be issued for: the HTTP API (B/, also named by the issuer B),
// the open MCP endpoint (B/mcp) and the one that requires sign-in (B/mcp/verified).
import type { AuthUrls } from './urls.js';

/** A URI as the WHATWG URL parser writes it (RFC 3986 §6.2.2 normalised); anything else as it is. */
export function canonicalUri(value: string): string {
  return URL.canParse(value) ? new URL(value).href : value;
}

/**
 * The resource `requested` names, or null where it names none of ours. MCP Authorization,
 * "Canonical Server URI": an upper-case scheme or host (a default port, dot segments) name the same
 * resource; a query or a fragment makes it another.
 */
export function resourceNamed(urls: AuthUrls, requested: string): string | null {
  const canonical = canonicalUri(requested);
  if (canonical === canonicalUri(urls.resource) || canonical === canonicalUri(urls.issuer)) return urls.resource;
  for (const resource of [urls.mcpResource, urls.mcpVerifiedResource]) if (canonical === canonicalUri(resource)) return resource;
  return null;
}

export const resourcesListed = (urls: AuthUrls): string => `${urls.resource}, ${urls.mcpResource} or ${urls.mcpVerifiedResource}`;

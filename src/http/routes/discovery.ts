// GET discovery documents and the JWKS: public, cacheable, open to every origin (browser-based
// agents and scanners read them cross-origin).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SigningKeys } from '../../auth/keys.js';
import { type AuthFeatures, authorizationServerMetadata, protectedResourceMetadata } from '../../auth/metadata.js';
import { authUrls, basePath } from '../../auth/urls.js';
import type { StudioProfile } from '../../studio/profile.js';
import { API_CATALOG_PATH, API_CATALOG_TYPE, agentLinks, apiCatalog, apiCatalogLinkHeader } from '../../web/agent-links.js';

/** Long enough to spare clients, short enough that a rotated key is seen within the hour. */
const DISCOVERY_MAX_AGE_SECONDS = 3600;

export interface DiscoveryRouteOptions {
  readonly publicUrl: string;
  readonly profile: StudioProfile;
  readonly keys: SigningKeys;
  readonly features: AuthFeatures;
}

export async function discoveryRoutes(app: FastifyInstance, { publicUrl, profile, keys, features }: DiscoveryRouteOptions) {
  const urls = authUrls(publicUrl);
  const asMetadata = authorizationServerMetadata(urls, features);
  const documents: Record<string, () => unknown> = {
    '/.well-known/oauth-protected-resource': () => protectedResourceMetadata(urls, profile, 'api'),
    '/.well-known/oauth-protected-resource/mcp': () => protectedResourceMetadata(urls, profile, 'mcp'),
    '/.well-known/oauth-protected-resource/mcp/verified': () => protectedResourceMetadata(urls, profile, 'mcp-verified'),
    '/.well-known/oauth-authorization-server': () => asMetadata,
    '/.well-known/jwks.json': () => keys.publicJwks(),
  };
  // PUBLIC_URL with a path (https://host/inquiry): clients look for the metadata of that issuer and
  // those resources at the host's root, the path after the well-known name (RFC 8414 §3.1, RFC 9728
  // §3.1), and a proxy that passes /.well-known/ on unchanged brings them here.
  const root = basePath(publicUrl);
  if (root !== '') {
    documents[`/.well-known/oauth-authorization-server${root}`] = () => asMetadata;
    documents[`/.well-known/oauth-protected-resource${root}/`] = () => protectedResourceMetadata(urls, profile, 'api');
    documents[`/.well-known/oauth-protected-resource${root}/mcp`] = () => protectedResourceMetadata(urls, profile, 'mcp');
    documents[`/.well-known/oauth-protected-resource${root}/mcp/verified`] = () => protectedResourceMetadata(urls, profile, 'mcp-verified');
  }
  const publish = (reply: FastifyReply, body: unknown, type = 'application/json') =>
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${DISCOVERY_MAX_AGE_SECONDS}`)
      .type(type)
      .send(body);
  for (const [path, document] of Object.entries(documents)) {
    app.get(path, async (_request, reply) => publish(reply, document()));
  }
  // RFC 9727 §2: the catalog answers GET with the linkset and HEAD (Fastify's, from this GET) with
  // the Link header naming it; §4.2: its media type carries the API-catalog profile.
  const links = agentLinks(publicUrl);
  const catalog = JSON.stringify(apiCatalog(links));
  app.get(API_CATALOG_PATH, async (_request, reply) =>
    publish(reply.header('link', apiCatalogLinkHeader(links)), catalog, API_CATALOG_TYPE),
  );
}

// What a crawler or an agent finds this service by, in one place: the Link header of the contact page
// (RFC 8288), the API catalog at /.well-known/api-catalog (RFC 9727), and the links the markdown page
// and llms.txt give. Every address comes from PUBLIC_URL; relation types are IANA-registered ones.
import { authUrls } from '../auth/urls.js';

export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** RFC 9727 §4.2: the linkset's profile, which says it is an API catalog. */
export const API_CATALOG_PROFILE = 'https://www.rfc-editor.org/info/rfc9727';
export const API_CATALOG_TYPE = `application/linkset+json; profile="${API_CATALOG_PROFILE}"`;
export const SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';

/** One typed link: `type` is the media type a plain GET of `href` answers with (no parameters). */
export interface TypedLink {
  readonly href: string;
  readonly type: string;
  readonly title: string;
}

export interface AgentLinks {
  readonly home: TypedLink;
  readonly apiCatalog: TypedLink;
  readonly openApi: TypedLink;
  readonly apiReference: TypedLink;
  readonly authMd: TypedLink;
  readonly llmsTxt: TypedLink;
  readonly serverCard: TypedLink;
  readonly mcpCatalog: TypedLink;
  readonly mcp: string;
  readonly health: TypedLink;
  readonly protectedResource: TypedLink;
  readonly mcpProtectedResource: TypedLink;
}

export function agentLinks(publicUrl: string): AgentLinks {
  const urls = authUrls(publicUrl);
  const base = urls.issuer;
  return {
    home: { href: `${base}/`, type: 'text/markdown', title: 'This page in markdown' },
    apiCatalog: { href: `${base}${API_CATALOG_PATH}`, type: 'application/linkset+json', title: 'API catalog' },
    openApi: { href: `${base}/openapi.json`, type: 'application/json', title: 'OpenAPI 3.1 description' },
    apiReference: { href: `${base}/docs`, type: 'text/html', title: 'API reference' },
    authMd: { href: urls.authMd, type: 'text/markdown', title: 'Agent auth' },
    llmsTxt: { href: `${base}/llms.txt`, type: 'text/plain', title: 'llms.txt' },
    serverCard: { href: `${base}${SERVER_CARD_PATH}`, type: 'application/json', title: 'MCP server card' },
    mcpCatalog: { href: `${base}/.well-known/mcp/catalog.json`, type: 'application/json', title: 'MCP catalog' },
    mcp: urls.mcpResource,
    health: { href: `${base}/api/health`, type: 'application/json', title: 'Health' },
    protectedResource: { href: urls.protectedResourceMetadata, type: 'application/json', title: 'Protected resource metadata' },
    mcpProtectedResource: { href: urls.mcpProtectedResourceMetadata, type: 'application/json', title: 'Protected resource metadata' },
  };
}

/**
 * The Link header of GET / (RFC 8288 §3): the catalog, the API's description and documentation, the
 * MCP server card (the MCP server's description), llms.txt, and this page as markdown (same URL,
 * asked for with `Accept: text/markdown`). The titles are fixed ASCII text without quotes.
 */
export function homeLinkHeader(links: AgentLinks): string {
  const entries: [string, TypedLink][] = [
    ['api-catalog', links.apiCatalog],
    ['service-desc', links.openApi],
    ['service-doc', links.apiReference],
    ['service-doc', links.authMd],
    ['service-desc', links.serverCard],
    ['describedby', links.llmsTxt],
    ['alternate', links.home],
  ];
  return entries.map(([rel, link]) => `<${link.href}>; rel="${rel}"; type="${link.type}"; title="${link.title}"`).join(', ');
}

/** RFC 9727 §2: the answer to HEAD (and GET) of the catalog links to it with the api-catalog relation. */
export function apiCatalogLinkHeader(links: AgentLinks): string {
  return `<${links.apiCatalog.href}>; rel="api-catalog"`;
}

type LinkTarget = { readonly href: string; readonly type: string; readonly title: string };
const target = ({ href, type, title }: TypedLink): LinkTarget => ({ href, type, title });

/**
 * The API catalog (RFC 9727 §4, in the RFC 9264 JSON linkset format): one context per API, anchored
 * at its address (the resource identifiers of RFC 9728), with its description, documentation,
 * metadata (where its tokens come from) and status.
 */
export function apiCatalog(links: AgentLinks): { linkset: Record<string, string | LinkTarget[]>[] } {
  return {
    linkset: [
      {
        anchor: links.home.href,
        'service-desc': [target(links.openApi)],
        'service-doc': [target(links.apiReference), target(links.authMd)],
        'service-meta': [target(links.protectedResource)],
        status: [target(links.health)],
        describedby: [target(links.llmsTxt)],
      },
      {
        anchor: links.mcp,
        'service-desc': [target(links.serverCard)],
        'service-doc': [target(links.llmsTxt), target(links.authMd)],
        'service-meta': [target(links.mcpProtectedResource)],
      },
    ],
  };
}

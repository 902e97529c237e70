// The MCP server card (the server-card extension draft, SEP-2127) and the domain's MCP catalog that
// lists it: what a client or registry learns before connecting.
import { basePath } from '../auth/urls.js';
import type { StudioProfile } from '../studio/profile.js';
import { MCP_SERVER_NAME, MCP_SERVER_VERSION } from './server.js';
import { TOOLS } from './tools.js';
import { MCP_PROTOCOL_VERSIONS } from './versions.js';

export const SERVER_CARD_MEDIA_TYPE = 'application/mcp-server-card+json';
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
/** The card's addresses: the well-known one, and beside the endpoint (PUBLIC_URL's path first for both). */
export const SERVER_CARD_PATHS = ['/.well-known/mcp/server-card.json', '/mcp/server-card'] as const;
export const MCP_CATALOG_PATH = '/.well-known/mcp/catalog.json';
/** The draft's limit on the card's description. */
const DESCRIPTION_MAX_LENGTH = 100;

/**
 * The card's name: the studio's website host reversed (https://northlight.example →
 * example.northlight), a namespace a registry verifies against that domain; `www.` is not part of
 * it. A website without a DNS host name (an IP address, localhost) falls back to PUBLIC_URL's host.
 */
export function serverCardName(profile: Pick<StudioProfile, 'website'>, publicUrl: string): string {
  const website = dnsHost(profile.website);
  const host = website ?? new URL(publicUrl).hostname;
  return `${host
    .replace(/^www\./, '')
    .split('.')
    .reverse()
    .join('.')}/${MCP_SERVER_NAME}`;
}

function dnsHost(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { protocol, hostname } = new URL(url);
  if (protocol !== 'https:' && protocol !== 'http:') return undefined;
  // An IP address (v4, or v6 in brackets) or a single label names no domain to verify.
  if (!hostname.includes('.') || /^[\d.]+$/.test(hostname) || hostname.startsWith('[')) return undefined;
  return hostname.toLowerCase();
}

/** The server card: the draft's fields, and the earlier ones scanners still read, in one document. */
export function serverCard(publicUrl: string, profile: StudioProfile) {
  const description = `Send project inquiries to ${profile.name} and look up its services.`;
  const authentication = { required: false, schemes: ['bearer'] };
  // The same tools twice: open to every agent, and for a person signed in with OAuth (MCP Authorization).
  const remote = (path: string, required: boolean) => ({
    type: 'streamable-http',
    url: `${publicUrl}${path}`,
    supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
    authentication: { ...authentication, required },
  });
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(profile, publicUrl),
    version: MCP_SERVER_VERSION,
    title: `${profile.name} inquiries`,
    description: description.length <= DESCRIPTION_MAX_LENGTH ? description : `${description.slice(0, DESCRIPTION_MAX_LENGTH - 1)}…`,
    websiteUrl: profile.website,
    remotes: [remote('/mcp', false), remote('/mcp/verified', true)],
    capabilities: { tools: { listChanged: false } },
    tools: TOOLS.map(({ name, title, description: toolDescription, inputSchema, outputSchema, annotations }) => ({
      name,
      title,
      description: toolDescription,
      inputSchema,
      outputSchema,
      annotations,
    })),
    serverInfo: { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    // A path on the server's host (PUBLIC_URL's path first), as the remote's url is.
    transport: { type: 'streamable-http', endpoint: `${basePath(publicUrl)}/mcp` },
    authentication,
  };
}

/** The domain's MCP catalog (the same draft): one entry, this server's card. */
export function mcpCatalog(publicUrl: string, profile: StudioProfile) {
  return {
    specVersion: 'draft',
    entries: [
      {
        identifier: serverCardName(profile, publicUrl),
        displayName: `${profile.name} inquiries`,
        mediaType: SERVER_CARD_MEDIA_TYPE,
        url: `${publicUrl}${SERVER_CARD_PATHS[0]}`,
      },
    ],
  };
}

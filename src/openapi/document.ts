// The OpenAPI 3.1.0 description of the whole interface (docs/api.md): built once
// from the configuration, the studio profile and the very schema objects the routes validate with.
// Each area of the interface describes its own paths and schemas; this file puts them together.
import { authFeatures } from '../auth/metadata.js';
import { authUrls } from '../auth/urls.js';
import type { Config } from '../config.js';
import type { StudioProfile } from '../studio/profile.js';
import { agentAuthArea } from './agent-auth.js';
import type { Area, AreaContext, Json, PathItem } from './common.js';
import { headers, parameters, securitySchemes, sharedSchemas } from './components.js';
import { discoveryArea } from './discovery.js';
import { inquiriesArea } from './inquiries.js';
import { mcpArea } from './mcp.js';
import { signInArea } from './sign-in.js';
import { siteArea } from './site.js';

/** The description declares its own version (OpenAPI 3.1 §4.8.2 info.version). Paths carry none. */
export const API_VERSION = '1.0.0';

export interface OpenApiDocument extends Json {
  readonly openapi: '3.1.0';
  readonly info: Json;
  readonly servers: readonly { readonly url: string }[];
  readonly paths: Record<string, PathItem>;
  readonly components: { readonly schemas: Record<string, Json> } & Json;
}

const TAGS = [
  { name: 'Inquiries', description: 'Send a project inquiry to the studio. No token needed.' },
  { name: 'Health', description: 'Whether the service and its store answer.' },
  { name: 'Discovery', description: 'OAuth metadata (RFC 9728, RFC 8414) and signing keys for agents.' },
  { name: 'Agent auth', description: 'Optional agent registration, claims and tokens. The walk-through is /auth.md.' },
  { name: 'MCP', description: 'The Model Context Protocol tool server.' },
  { name: 'Documentation', description: 'This description, the API reference and auth.md.' },
  { name: 'Website', description: 'The studio’s contact page and the files crawlers and agents read.' },
];

export function buildOpenApiDocument({ config, profile }: { config: Config; profile: StudioProfile }): OpenApiDocument {
  const context: AreaContext = { config, profile, urls: authUrls(config.publicUrl) };
  const areas: Area[] = [inquiriesArea(context), discoveryArea(context), agentAuthArea(context), mcpArea(context), siteArea(context)];
  // The sign-in flow mails a code: its routes exist only where SMTP_URL is set.
  if (authFeatures(config).emailEnabled) areas.push(signInArea(context));
  const paths: Record<string, PathItem> = {};
  const schemas: Record<string, Json> = { ...sharedSchemas };
  for (const area of areas) {
    for (const [path, item] of Object.entries(area.paths)) {
      if (path in paths) throw new Error(`OpenAPI: ${path} is described twice`);
      paths[path] = item;
    }
    for (const [name, schema] of Object.entries(area.schemas)) {
      if (name in schemas) throw new Error(`OpenAPI: schema ${name} is defined twice`);
      schemas[name] = schema;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `${profile.name} inquiries`,
      version: API_VERSION,
      summary: `Send project inquiries to ${profile.name}, from people and AI agents.`,
      description: [
        `The public inquiry service of ${profile.name}. \`POST /api/contact\` needs no token; agents may register and use a bearer`,
        'token only to have their inquiries attributed (walk-through: /auth.md). AI agents can also use the MCP tool server at /mcp,',
        'or at /mcp/verified, which requires a person signed in with OAuth (the authorization-code flow, docs/agent-auth.md).',
        '',
        'Errors are RFC 9457 `application/problem+json` with a stable `error` code; /oauth/* answers RFC 6749 §5.2',
        '`{error, error_description}` instead (a body in the wrong format there is a 400 `invalid_request`, not a 415).',
        'Unknown paths answer 404 problem+json (`not_found`; the OAuth error JSON under /oauth/). Every response carries',
        'security headers, CORS for the configured origins and an `X-Request-Id`. While the service shuts down, a request that',
        'still arrives on an open connection answers 503 `shutting_down` (problem+json; the OAuth error JSON under /oauth/).',
      ].join('\n'),
      contact: { name: profile.name, url: profile.website, email: profile.email },
    },
    servers: [{ url: config.publicUrl }],
    tags: TAGS,
    paths,
    components: { schemas, headers, parameters, securitySchemes },
  };
}

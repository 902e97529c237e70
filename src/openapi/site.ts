// The documents and pages of the OpenAPI document: GET /openapi.json (this document), /auth.md,
// /docs (Swagger UI) and its files, and the website's GET /, /robots.txt, /llms.txt, /assets/… and
// the proof-of-work worker's /assets/pow/….
import { ASSET_FILES } from '../http/routes/website.js';
import { agentLinks, homeLinkHeader } from '../web/agent-links.js';
import { ALTCHA_MODULES, POW_WORKER } from '../web/pow-assets.js';
import { robotsTxt } from '../web/texts.js';
import {
  type Area,
  type AreaContext,
  example,
  headerRef,
  type Json,
  type Operation,
  PUBLIC_HEADERS,
  parameterRef,
  problemResponse,
} from './common.js';
import { DOCS_ASSETS } from './swagger-ui.js';

const text = { type: 'string' } as const;
/** The media type without its parameters: `text/css; charset=utf-8` → `text/css`. */
const mediaType = (type: string) => type.split(';')[0]?.trim() ?? type;
/** PNG bodies are bytes: no schema (OpenAPI 3.1 §4.8.14.3). */
const mediaOf = (type: string): Json => (type.startsWith('image/png') ? {} : { schema: text });

const CACHED = { 'Cache-Control': headerRef('Cache-Control'), ETag: headerRef('ETag') };
const NOT_MODIFIED = { description: 'Not modified: the If-None-Match ETag still matches. No body.', headers: CACHED };

/** A GET of a fixed document with an ETag: 200 with the body, 304 when the client's copy is current. */
function documentGet(
  operationId: string,
  summary: string,
  description: string,
  tag: string,
  content: Record<string, Json>,
  headers: Record<string, Json> = CACHED,
): Operation {
  return {
    operationId,
    summary,
    description,
    tags: [tag],
    parameters: [parameterRef('If-None-Match')],
    responses: { 200: { description: summary, headers, content }, 304: NOT_MODIFIED },
  };
}

/** The content version a page links its files with (?v=<hash>). */
const VERSION_PARAMETER = {
  name: 'v',
  in: 'query',
  required: false,
  description: 'The content version the page links with: such a URL is cached for a year, any other for an hour.',
  schema: text,
};

/** GET /<prefix>/{file} of a fixed set of files, each with its media type, linked by their page with ?v=. */
function filesGet(operationId: string, summary: string, tag: string, files: Record<string, string>): Operation {
  const names = Object.keys(files);
  const content: Record<string, Json> = {};
  for (const type of Object.values(files)) content[mediaType(type)] = mediaOf(type);
  return {
    operationId,
    summary,
    description: `One of: ${names.join(', ')}.`,
    tags: [tag],
    parameters: [
      { name: 'file', in: 'path', required: true, schema: { type: 'string', enum: names } },
      VERSION_PARAMETER,
      parameterRef('If-None-Match'),
    ],
    responses: {
      200: { description: 'The file.', headers: CACHED, content },
      304: NOT_MODIFIED,
      404: problemResponse(404, 'No such file.', [
        { error: 'not_found', detail: `There is no GET /${tag === 'Website' ? 'assets' : 'docs'}/nope.css here.` },
      ]),
    },
  };
}

/**
 * GET /assets/pow/… of the proof-of-work worker's files, one path per folder (the altcha-lib modules
 * keep their folders, so that their relative imports hold).
 */
function powPaths(): Record<string, { get: Operation }> {
  const folders = new Map<string, Record<string, string>>();
  for (const path of [POW_WORKER, ...ALTCHA_MODULES]) {
    const folder = path.slice(0, path.lastIndexOf('/') + 1);
    folders.set(folder, { ...folders.get(folder), [path.slice(folder.length)]: ASSET_FILES['site.js'] });
  }
  return Object.fromEntries(
    [...folders].map(([folder, files]) => {
      const name = folder.replace(/(^|\/)(\w)/g, (_match, _slash: string, letter: string) => letter.toUpperCase()).replace(/\//g, '');
      const summary = `A file of the contact page’s proof-of-work worker${folder ? ` (altcha-lib’s ${folder})` : ''}`;
      return [`/assets/pow/${folder}{file}`, { get: filesGet(`getProofOfWork${name}File`, summary, 'Website', files) }];
    }),
  );
}

export function siteArea({ config }: AreaContext): Area {
  const base = config.publicUrl;
  const docsFiles = Object.fromEntries(Object.entries(DOCS_ASSETS).map(([name, asset]) => [name, asset.type]));
  return {
    paths: {
      '/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          summary: 'This OpenAPI 3.1 description',
          description: 'The machine-readable description of the whole interface. Public, readable from any origin, cacheable.',
          tags: ['Documentation'],
          responses: {
            200: {
              description: 'The OpenAPI document.',
              headers: PUBLIC_HEADERS,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['openapi', 'info', 'paths'],
                    properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
                  },
                },
              },
            },
          },
        },
      },
      '/auth.md': {
        get: {
          operationId: 'getAuthMd',
          summary: 'Agent auth walk-through (auth.md)',
          description: 'For agent developers: registering, claiming, tokens, revocation, every error code and limit, with curl. Markdown.',
          tags: ['Documentation'],
          responses: { 200: { description: 'The walk-through.', headers: PUBLIC_HEADERS, content: { 'text/markdown': { schema: text } } } },
        },
      },
      '/docs': {
        get: documentGet(
          'getApiReference',
          'Interactive API reference',
          'Swagger UI rendering /openapi.json (its files are under /docs/).',
          'Documentation',
          { 'text/html': { schema: text } },
        ),
      },
      '/docs/': {
        get: {
          operationId: 'getApiReferenceWithSlash',
          summary: 'The API reference, asked for with a trailing slash',
          description: 'Redirects to /docs, whose files are named relative to it.',
          tags: ['Documentation'],
          responses: {
            301: {
              description: 'Moved to /docs (a relative Location, which holds under a PUBLIC_URL path too).',
              headers: { Location: { description: 'Where the reference is.', schema: { type: 'string', const: '../docs' } } },
            },
          },
        },
      },
      '/docs/{file}': { get: filesGet('getApiReferenceFile', 'A file of the API reference page', 'Documentation', docsFiles) },
      '/': {
        get: documentGet(
          'getHomePage',
          'The contact page',
          'The studio’s page with the contact form, for people; its markdown rendering for `Accept: text/markdown` (the studio, its ' +
            'services, how to send an inquiry by HTTP and MCP, where the documents for agents are). Either carries the same Link header.',
          'Website',
          { 'text/html': { schema: text }, 'text/markdown': { schema: text } },
          {
            ...CACHED,
            Link: {
              description:
                'RFC 8288 links to the API catalog, the OpenAPI document, the API reference, auth.md, the MCP server card and llms.txt.',
              schema: { type: 'string', examples: [homeLinkHeader(agentLinks(base))] },
            },
            Vary: { description: 'The answer depends on Accept (and on Origin, for CORS).', schema: { type: 'string', pattern: 'Accept' } },
          },
        ),
      },
      '/robots.txt': {
        get: documentGet('getRobotsTxt', 'robots.txt', 'Everything may be crawled.', 'Website', {
          'text/plain': { schema: text, examples: { robots: example('robots.txt', robotsTxt(base)) } },
        }),
      },
      '/llms.txt': {
        get: documentGet(
          'getLlmsTxt',
          'llms.txt',
          'What the service is and how an agent sends an inquiry (https://llmstxt.org). Readable from any origin.',
          'Website',
          { 'text/plain': { schema: text } },
          { ...CACHED, 'Access-Control-Allow-Origin': headerRef('Access-Control-Allow-Origin') },
        ),
      },
      '/assets/{file}': { get: filesGet('getWebsiteAsset', 'A file of the contact page', 'Website', ASSET_FILES) },
      ...powPaths(),
    },
    schemas: {},
  };
}

// GET /docs: the interactive API reference, Swagger UI from the swagger-ui-dist package rendering
// /openapi.json. Its files are read once at registration from node_modules (and the page and its
// init script from src/openapi/docs/), and served under /docs/… from this origin: no CDN.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { notModified } from '../http/routes/website.js';
import { securityHeaders } from '../http/security-headers.js';

export const DOCS_PATH = '/docs';

const PAGE_DIR = new URL('./docs/', import.meta.url);
const require = createRequire(import.meta.url);
const fromPackage = (file: string) => require.resolve(`swagger-ui-dist/${file}`);
const fromPage = (file: string) => new URL(file, PAGE_DIR);

/** The files under /docs/, with where they come from and their media type. */
export const DOCS_ASSETS = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', source: () => fromPackage('swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', source: () => fromPackage('swagger-ui-bundle.js') },
  'swagger-init.js': { type: 'text/javascript; charset=utf-8', source: () => fromPage('swagger-init.js') },
  'favicon-32x32.png': { type: 'image/png', source: () => fromPackage('favicon-32x32.png') },
  'favicon-16x16.png': { type: 'image/png', source: () => fromPackage('favicon-16x16.png') },
} as const;

/** Swagger UI's files change only with the package version: cached for a day, revalidated by ETag. */
const ASSET_CACHE = 'public, max-age=86400';
const PAGE_CACHE = 'public, max-age=300';

/**
 * The service's strict CSP with one exception for /docs only: Swagger UI (React) sets inline
 * `style` attributes on its elements, which `style-src 'self'` blocks, so style-src also allows
 * 'unsafe-inline'. Inline styles cannot run code; scripts stay 'self' (no inline script, no eval).
 */
export function docsContentSecurityPolicy(https: boolean): string {
  const policy = securityHeaders(https)['content-security-policy'];
  if (!policy?.includes("style-src 'self'")) throw new Error("the service's CSP has no style-src 'self' to extend for /docs");
  return policy.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");
}

export async function swaggerUiRoutes(app: FastifyInstance, { https }: { https: boolean }) {
  const csp = docsContentSecurityPolicy(https);
  const serve = (path: string, body: Buffer, type: string, cacheControl: string) => {
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
    app.get(path, async (request, reply) => {
      reply.header('content-security-policy', csp).header('cache-control', cacheControl).header('etag', etag);
      if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type(type).send(body);
    });
  };
  serve(DOCS_PATH, await readFile(fromPage('index.html')), 'text/html; charset=utf-8', PAGE_CACHE);
  // The page names its files relative to itself (docs/…, so that a PUBLIC_URL path holds): under
  // /docs/ they would be looked for in /docs/docs/. Relative too, this redirect holds under a path.
  app.get(`${DOCS_PATH}/`, async (_request, reply) => reply.code(301).header('location', `..${DOCS_PATH}`).send());
  for (const [file, asset] of Object.entries(DOCS_ASSETS)) {
    serve(`${DOCS_PATH}/${file}`, await readFile(asset.source()), asset.type, ASSET_CACHE);
  }
}

// GET /docs: the interactive API reference, Swagger UI from the swagger-ui-dist package rendering
// /openapi.json. Its files are read once at registration from node_modules (and the page and its
// init script from src/openapi/docs/), and served under /docs/… from this origin: no CDN.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { document, PAGE_CACHE, sendDocument, sendVersionedAsset, type VersionedAsset, versionedAsset } from '../http/documents.js';
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

/**
 * The page and its files, served like the contact page's: the page links each file with
 * ?v=<content hash>, so a page fresh from the server never runs a file cached from another release.
 */
export async function swaggerUiRoutes(app: FastifyInstance, { https }: { https: boolean }) {
  const csp = docsContentSecurityPolicy(https);
  const assets = new Map<string, VersionedAsset>();
  for (const [file, asset] of Object.entries(DOCS_ASSETS)) assets.set(file, versionedAsset(await readFile(asset.source()), asset.type));
  const html = (await readFile(fromPage('index.html'), 'utf8')).replace(/"docs\/([\w.-]+)"/g, (_link, file: string) => {
    const asset = assets.get(file);
    if (asset === undefined) throw new Error(`the /docs page links docs/${file}, which is not one of its files`);
    return `"docs/${file}?v=${asset.version}"`;
  });
  const page = document(html, 'text/html; charset=utf-8');
  app.get(DOCS_PATH, async (request, reply) => sendDocument(request, reply.header('content-security-policy', csp), page, PAGE_CACHE));
  // The page names its files relative to itself (docs/…, so that a PUBLIC_URL path holds): under
  // /docs/ they would be looked for in /docs/docs/. Relative too, this redirect holds under a path.
  app.get(`${DOCS_PATH}/`, async (_request, reply) => reply.code(301).header('location', `..${DOCS_PATH}`).send());
  for (const [file, asset] of assets) {
    app.get(`${DOCS_PATH}/${file}`, async (request, reply) =>
      sendVersionedAsset(request, reply.header('content-security-policy', csp), asset),
    );
  }
}

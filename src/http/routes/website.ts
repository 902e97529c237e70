// GET / (the studio's contact page), its static assets, the proof-of-work worker's files under
// /assets/pow/, /robots.txt and /llms.txt. Everything is read and rendered once at registration: the
// page depends only on the studio profile and PUBLIC_URL, the assets only on the files in src/web/
// and the altcha-lib package. Nothing is fetched from another host.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { basePath } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { StudioProfile } from '../../studio/profile.js';
import { renderContactPage } from '../../web/page.js';
import { POW_WORKER, readPowFiles } from '../../web/pow-assets.js';
import { llmsTxt, robotsTxt } from '../../web/texts.js';
import {
  document,
  JS_TYPE,
  PAGE_CACHE,
  sendDocument,
  sendVersionedAsset,
  TEXT_CACHE,
  type VersionedAsset,
  versionedAsset,
} from '../documents.js';

const WEB_DIR = new URL('../../web/', import.meta.url);

export const ASSET_FILES = {
  'site.css': 'text/css; charset=utf-8',
  'counter.js': JS_TYPE,
  'signals.js': JS_TYPE,
  'site.js': JS_TYPE,
  'favicon.svg': 'image/svg+xml; charset=utf-8',
} as const;

export interface WebsiteRouteOptions {
  readonly config: Config;
  readonly profile: StudioProfile;
}

export async function websiteRoutes(app: FastifyInstance, { config, profile }: WebsiteRouteOptions) {
  const assets = new Map<string, VersionedAsset>();
  for (const [file, type] of Object.entries(ASSET_FILES)) assets.set(file, versionedAsset(await readFile(new URL(file, WEB_DIR)), type));
  const root = basePath(config.publicUrl);
  const assetUrl = (file: keyof typeof ASSET_FILES) => `${root}/assets/${file}?v=${assets.get(file)?.version}`;

  // The worker's version covers the modules it imports too, which are linked without one.
  const powFiles = await readPowFiles();
  const powVersion = versionedAsset(Buffer.concat([...powFiles.values()]), '').version;
  const powAssets = new Map([...powFiles].map(([path, body]) => [path, { ...versionedAsset(body, JS_TYPE), version: powVersion }]));

  const scripts = [assetUrl('counter.js'), assetUrl('signals.js'), assetUrl('site.js')];
  const page = document(
    renderContactPage(profile, config.publicUrl, {
      css: assetUrl('site.css'),
      js: scripts,
      icon: assetUrl('favicon.svg'),
      powWorker: `${root}/assets/pow/${POW_WORKER}?v=${powVersion}`,
    }),
    'text/html; charset=utf-8',
  );
  const robots = document(robotsTxt(config.publicUrl), 'text/plain; charset=utf-8');
  const llms = document(llmsTxt(config.publicUrl, profile), 'text/plain; charset=utf-8');

  app.get('/', async (request, reply) => sendDocument(request, reply, page, PAGE_CACHE));
  app.get('/robots.txt', async (request, reply) => sendDocument(request, reply, robots, TEXT_CACHE));
  // Agents running in browsers read it from other origins, like /auth.md and the discovery documents.
  app.get('/llms.txt', async (request, reply) => sendDocument(request, reply.header('access-control-allow-origin', '*'), llms, TEXT_CACHE));
  for (const [file, asset] of assets) app.get(`/assets/${file}`, async (request, reply) => sendVersionedAsset(request, reply, asset));
  for (const [path, asset] of powAssets)
    app.get(`/assets/pow/${path}`, async (request, reply) => sendVersionedAsset(request, reply, asset));
}

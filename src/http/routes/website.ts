// GET / (the studio's contact page, or its markdown rendering for `Accept: text/markdown`), its
// static assets, the proof-of-work worker's files under /assets/pow/, /robots.txt and /llms.txt. Everything is read and rendered once at registration: the
// page depends only on the studio profile and PUBLIC_URL, the assets only on the files in src/web/
// and the altcha-lib package. Nothing is fetched from another host.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { basePath } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { StudioProfile } from '../../studio/profile.js';
import { agentLinks, homeLinkHeader } from '../../web/agent-links.js';
import { renderContactPage } from '../../web/page.js';
import { contactPageMarkdown } from '../../web/page-markdown.js';
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
  'base.css': 'text/css; charset=utf-8',
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
      css: [assetUrl('base.css'), assetUrl('site.css')],
      js: scripts,
      icon: assetUrl('favicon.svg'),
      powWorker: `${root}/assets/pow/${POW_WORKER}?v=${powVersion}`,
    }),
    'text/html; charset=utf-8',
  );
  const markdown = document(contactPageMarkdown(profile, config.publicUrl), 'text/markdown; charset=utf-8');
  const links = homeLinkHeader(agentLinks(config.publicUrl));
  const robots = document(robotsTxt(config.publicUrl), 'text/plain; charset=utf-8');
  const llms = document(llmsTxt(config.publicUrl, profile), 'text/plain; charset=utf-8');

  // Both variants carry the Link header (RFC 8288) to what agents read, and say they vary by Accept.
  app.get('/', async (request, reply) => {
    addVary(reply.header('link', links), 'Accept');
    return sendDocument(request, reply, prefersMarkdown(request) ? markdown : page, PAGE_CACHE);
  });
  app.get('/robots.txt', async (request, reply) => sendDocument(request, reply, robots, TEXT_CACHE));
  // Agents running in browsers read it from other origins, like /auth.md and the discovery documents.
  app.get('/llms.txt', async (request, reply) => sendDocument(request, reply.header('access-control-allow-origin', '*'), llms, TEXT_CACHE));
  for (const [file, asset] of assets) app.get(`/assets/${file}`, async (request, reply) => sendVersionedAsset(request, reply, asset));
  for (const [path, asset] of powAssets)
    app.get(`/assets/pow/${path}`, async (request, reply) => sendVersionedAsset(request, reply, asset));
}

/** RFC 9110 §12.5.1: markdown only when Accept ranks it above HTML; HTML for anything else (or no Accept). */
function prefersMarkdown(request: FastifyRequest): boolean {
  return new Negotiator(request).mediaType(['text/html', 'text/markdown']) === 'text/markdown';
}

/** Adds a field to the Vary header, keeping what other hooks put there (CORS's Origin). */
function addVary(reply: FastifyReply, field: string): void {
  const current = String(reply.getHeader('vary') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (!current.some((name) => name === '*' || name.toLowerCase() === field.toLowerCase())) current.push(field);
  reply.header('vary', current.join(', '));
}

// GET / (the studio's contact page, or its markdown rendering for `Accept: text/markdown`), its
// static assets, the proof-of-work worker's files under /assets/pow/, /robots.txt and /llms.txt. Everything is read and rendered once at registration: the
// page depends only on the studio profile and PUBLIC_URL, the assets only on the files in src/web/
// and the altcha-lib package. Nothing is fetched from another host.
import { createHash } from 'node:crypto';
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

const WEB_DIR = new URL('../../web/', import.meta.url);

/** Assets are linked with ?v=<content hash>: such a URL never changes content, so it is cached for a year. */
const VERSIONED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** The same asset without (or with an old) version: kept for an hour. */
const ASSET_CACHE = 'public, max-age=3600';
/** The page and the text files change only with a deploy or a new profile. */
export const PAGE_CACHE = 'public, max-age=300';
const TEXT_CACHE = 'public, max-age=3600';

const JS_TYPE = 'text/javascript; charset=utf-8';

export const ASSET_FILES = {
  'site.css': 'text/css; charset=utf-8',
  'counter.js': JS_TYPE,
  'signals.js': JS_TYPE,
  'site.js': JS_TYPE,
  'favicon.svg': 'image/svg+xml; charset=utf-8',
} as const;

export interface Document {
  readonly body: Buffer;
  readonly type: string;
  /** Strong validator: a hash of the body. */
  readonly etag: string;
}

/** A file served at a fixed URL and linked as URL?v=<version>, the version a hash of its content. */
export interface VersionedAsset extends Document {
  readonly version: string;
}

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

export function document(content: string | Buffer, type: string): Document {
  const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { body, type, etag: `"${sha256(body).slice(0, 32)}"` };
}

export function versionedAsset(body: Buffer, type: string): VersionedAsset {
  return { ...document(body, type), version: sha256(body).slice(0, 12) };
}

/** An asset asked for with its current version is cached for a year; without it (or with an old one), for an hour. */
export function sendVersionedAsset(request: FastifyRequest, reply: FastifyReply, asset: VersionedAsset): FastifyReply {
  const { v } = request.query as { v?: unknown };
  return sendDocument(request, reply, asset, v === asset.version ? VERSIONED_ASSET_CACHE : ASSET_CACHE);
}

function sha256(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Sends a fixed document with its validator; a matching If-None-Match answers 304 without a body. */
export function sendDocument(request: FastifyRequest, reply: FastifyReply, doc: Document, cacheControl: string): FastifyReply {
  reply.header('cache-control', cacheControl).header('etag', doc.etag);
  if (notModified(request.headers['if-none-match'], doc.etag)) return reply.code(304).send();
  return reply.type(doc.type).send(doc.body);
}

/**
 * RFC 9110 §13.1.2: whether a GET's If-None-Match fails for a representation with `etag`, so that
 * it is answered 304: the header names that entity tag (compared weakly), or is `*` (any current
 * representation; every document here has one).
 */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

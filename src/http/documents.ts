// Fixed documents served with a strong validator, and assets linked by content version: the
// contact page's, the inbox's and the API reference's.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The stylesheet every page of the service links before its own (src/web/base.css), served at /assets/base.css. */
export async function baseStylesheetUrl(root: string): Promise<string> {
  const { version } = versionedAsset(await readFile(new URL('../web/base.css', import.meta.url)), '');
  return `${root}/assets/base.css?v=${version}`;
}

/** Assets are linked with ?v=<content hash>: such a URL never changes content, so it is cached for a year. */
const VERSIONED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** The same asset without (or with an old) version: kept for an hour. */
const ASSET_CACHE = 'public, max-age=3600';
/** The page and the text files change only with a deploy or a new profile. */
export const PAGE_CACHE = 'public, max-age=300';
export const TEXT_CACHE = 'public, max-age=3600';

export const JS_TYPE = 'text/javascript; charset=utf-8';

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

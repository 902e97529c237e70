// The inbox's stylesheet and script (src/web/inbox/), versioned by content like the contact page's.
import { readFile } from 'node:fs/promises';
import { JS_TYPE, type VersionedAsset, versionedAsset } from '../documents.js';

const INBOX_WEB_DIR = new URL('../../web/inbox/', import.meta.url);

export const INBOX_ASSET_FILES = { 'inbox.css': 'text/css; charset=utf-8', 'inbox.js': JS_TYPE } as const;

export async function readInboxAssets(): Promise<Map<keyof typeof INBOX_ASSET_FILES, VersionedAsset>> {
  const assets = new Map<keyof typeof INBOX_ASSET_FILES, VersionedAsset>();
  for (const [file, type] of Object.entries(INBOX_ASSET_FILES) as [keyof typeof INBOX_ASSET_FILES, string][]) {
    assets.set(file, versionedAsset(await readFile(new URL(file, INBOX_WEB_DIR)), type));
  }
  return assets;
}

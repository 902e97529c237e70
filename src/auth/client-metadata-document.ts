// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
// authorization spec uses them): a client_id that is an https URL names a JSON document the service
// fetches, from public addresses only (checked after DNS resolution, on the very address connected
// to), small, quickly, without redirects, and caches for a few minutes.
import { lookup as dnsLookup } from 'node:dns/promises';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './public-address.js';

export const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
export const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;
export const METADATA_DOCUMENT_CACHE_MS = 5 * 60 * 1000;
const CACHE_ENTRIES = 500;

export type Resolve = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface MetadataDocumentOptions {
  /** DNS resolution (all addresses of a name); the system resolver by default. */
  readonly resolve?: Resolve;
  /** Tests only: documents served from this host (127.0.0.1, ::1). */
  readonly allowLoopback?: boolean;
  /** Tests only: the certificate authority of a local https server. */
  readonly ca?: string;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

export class MetadataDocumentError extends Error {
  override readonly name = 'MetadataDocumentError';
}

/** Whether a client_id names a metadata document: an https URL with a path, no fragment, no credentials. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!clientId.startsWith('https://') || !URL.canParse(clientId)) return false;
  const url = new URL(clientId);
  return url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '' && url.href === clientId;
}

const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export type MetadataDocuments = ReturnType<typeof createMetadataDocuments>;

/** Fetches documents (as parsed JSON) through a small cache shared by every sign-in of this instance. */
export function createMetadataDocuments(options: MetadataDocumentOptions = {}) {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { readonly document: unknown; readonly until: number }>();

  async function get(url: string): Promise<unknown> {
    const cached = cache.get(url);
    if (cached && cached.until > now()) return cached.document;
    const document = await fetchDocument(url, options);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(url, { document, until: now() + METADATA_DOCUMENT_CACHE_MS });
    return document;
  }
  return { get };
}

/** A resolver for https.request that connects only to a public address of the name (all must be). */
function checkedLookup(resolve: Resolve, allowLoopback: boolean): LookupFunction {
  const check = async (hostname: string) => {
    const addresses = await resolve(hostname);
    if (addresses.length === 0) throw new MetadataDocumentError(`${hostname} has no address`);
    // Every address must be public: a name that also points inside could be answered from there.
    if (addresses.some(({ address }) => !isPublicAddress(address, { allowLoopback }))) {
      throw new MetadataDocumentError(`${hostname} resolves to an address that is not public`);
    }
    return addresses;
  };
  return (hostname, lookupOptions, callback) => {
    check(hostname).then(
      (addresses) => {
        const first = addresses[0] as { address: string; family: number };
        if ((lookupOptions as { all?: boolean }).all) callback(null, [...addresses]);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

function fetchDocument(url: string, options: MetadataDocumentOptions): Promise<unknown> {
  if (!isMetadataDocumentUrl(url)) return Promise.reject(new MetadataDocumentError('the client_id is not an https URL with a path'));
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const allowLoopback = options.allowLoopback ?? false;
  // An IP literal is never looked up: checked here.
  if (isIP(host) !== 0 && !isPublicAddress(host, { allowLoopback })) {
    return Promise.reject(new MetadataDocumentError('the client_id names an address that is not public'));
  }
  const timeoutMs = options.timeoutMs ?? METADATA_DOCUMENT_TIMEOUT_MS;
  return new Promise((resolvePromise, reject) => {
    const fail = (message: string) => {
      req.destroy();
      reject(new MetadataDocumentError(message));
    };
    const req = request(
      target,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup: checkedLookup(options.resolve ?? systemResolve, allowLoopback),
        // A new connection each time: a pooled one would skip the lookup and its check.
        agent: false,
        ...(options.ca !== undefined && { ca: options.ca }),
        timeout: timeoutMs,
      },
      (response) => {
        if (response.statusCode !== 200) return fail(`the metadata document answered ${response.statusCode} (redirects are not followed)`);
        if (!/^application\/([\w.+-]*\+)?json\b/i.test(response.headers['content-type'] ?? '')) {
          return fail('the metadata document is not served as application/json');
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > METADATA_DOCUMENT_MAX_BYTES) fail(`the metadata document is larger than ${METADATA_DOCUMENT_MAX_BYTES} bytes`);
          else chunks.push(chunk);
        });
        response.on('error', () => fail('the metadata document could not be read'));
        response.on('end', () => {
          try {
            resolvePromise(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new MetadataDocumentError('the metadata document is not JSON'));
          }
        });
      },
    );
    const deadline = setTimeout(() => fail(`the metadata document took longer than ${timeoutMs} ms`), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => fail(`the metadata document took longer than ${timeoutMs} ms`));
    req.on('error', (error) =>
      reject(error instanceof MetadataDocumentError ? error : new MetadataDocumentError('the metadata document could not be fetched')),
    );
    req.end();
  });
}

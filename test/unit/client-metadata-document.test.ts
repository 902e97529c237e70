// Client ID Metadata Documents: which addresses may be fetched from (after DNS resolution), and the
// fetch's limits, against a local https server on a self-signed certificate made by openssl, with
// the resolver injected (a name may point anywhere) and loopback allowed only where a test says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetadataDocuments, isMetadataDocumentUrl, METADATA_DOCUMENT_MAX_BYTES } from '../../src/auth/client-metadata-document.js';
import { isPublicAddress } from '../../src/auth/public-address.js';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '2001:db8::1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('lets loopback through only when allowed, and nothing else private', () => {
    expect(isPublicAddress('127.0.0.1', { allowLoopback: true })).toBe(true);
    expect(isPublicAddress('::1', { allowLoopback: true })).toBe(true);
    expect(isPublicAddress('10.0.0.1', { allowLoopback: true })).toBe(false);
  });

  it('refuses every address of 10/8, 192.168/16 and 127/8', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(fc.constantFrom('10', '127', '192.168'), octet, octet, octet, (prefix, a, b, c) => {
        const address = prefix === '192.168' ? `192.168.${b}.${c}` : `${prefix}.${a}.${b}.${c}`;
        return !isPublicAddress(address);
      }),
    );
  });
});

describe('isMetadataDocumentUrl', () => {
  it.each([
    ['https://client.example/oauth/metadata.json', true],
    ['https://client.example/', false],
    ['http://client.example/metadata.json', false],
    ['https://client.example/metadata.json#x', false],
    ['https://user:pass@client.example/metadata.json', false],
    ['mcp_abc', false],
  ])('%s → %s', (url, expected) => {
    expect(isMetadataDocumentUrl(url)).toBe(expected);
  });
});

describe('fetching a document', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let ca: string;
  let requests = 0;
  const routes: Record<string, (response: import('node:http').ServerResponse) => void> = {
    '/client.json': (response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_name: 'Local' })),
    '/big.json': (response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ padding: 'x'.repeat(METADATA_DOCUMENT_MAX_BYTES) })),
    '/moved.json': (response) => response.writeHead(302, { location: '/client.json' }).end(),
    '/text.json': (response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('{}'),
    '/slow.json': () => {},
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cimd-'));
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
        ...['-subj', '/CN=client.test', '-addext', 'subjectAltName=DNS:client.test'],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (request, response) => {
      requests++;
      const route = routes[request.url ?? ''];
      if (route) route(response);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const resolveTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const url = (path: string) => `https://client.test:${port}${path}`;

  it('fetches from a name resolving to an allowed address, and caches it', async () => {
    const documents = createMetadataDocuments({ resolve: resolveTo('127.0.0.1'), allowLoopback: true, ca });
    const before = requests;
    expect(await documents.get(url('/client.json'))).toEqual({ client_name: 'Local' });
    expect(await documents.get(url('/client.json'))).toEqual({ client_name: 'Local' });
    expect(requests - before).toBe(1);
  });

  it('refuses a name that resolves to a private address, connecting to nothing', async () => {
    const before = requests;
    const documents = createMetadataDocuments({ resolve: resolveTo('127.0.0.1'), ca });
    await expect(documents.get(url('/client.json'))).rejects.toThrow(/not public/);
    const mixed = createMetadataDocuments({ resolve: resolveTo('93.184.216.34', '10.0.0.1'), ca });
    await expect(mixed.get(url('/client.json'))).rejects.toThrow(/not public/);
    expect(requests).toBe(before);
  });

  it('refuses an IP literal that is not public', async () => {
    await expect(createMetadataDocuments().get('https://169.254.169.254/latest/meta-data')).rejects.toThrow(/not public/);
  });

  it('refuses a certificate it cannot verify', async () => {
    const documents = createMetadataDocuments({ resolve: resolveTo('127.0.0.1'), allowLoopback: true });
    await expect(documents.get(url('/client.json'))).rejects.toThrow(/could not be fetched/);
  });

  it.each([
    ['/big.json', /larger than/],
    ['/moved.json', /answered 302/],
    ['/text.json', /not served as application\/json/],
    ['/missing.json', /answered 404/],
  ])('refuses %s', async (path, reason) => {
    const documents = createMetadataDocuments({ resolve: resolveTo('127.0.0.1'), allowLoopback: true, ca });
    await expect(documents.get(url(path))).rejects.toThrow(reason);
  });

  it('gives up on a document that does not come in time', async () => {
    const documents = createMetadataDocuments({ resolve: resolveTo('127.0.0.1'), allowLoopback: true, ca, timeoutMs: 300 });
    await expect(documents.get(url('/slow.json'))).rejects.toThrow(/took longer than 300 ms/);
  });
});

// The contact page, its assets, /robots.txt and /llms.txt over HTTP (in-process): content types,
// caching, escaping of the studio profile, limits from the Inquiry schema, and that every address
// the text files give comes from PUBLIC_URL. The page in a real browser: website.test.ts.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { ASSET_FILES } from '../../src/http/routes/website.js';
import { INQUIRY_LIMITS } from '../../src/inquiries/schema.js';
import { exampleStudioProfile } from '../../src/studio/profile.js';
import { startTestApp, type TestApp, tempDir } from '../helpers/app.js';

const BASE = 'https://studio.example';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

const start = (env: Record<string, string> = {}) => startTestApp({ startWorker: false, env: { PUBLIC_URL: BASE, ...env } });
const get = (url: string, headers: Record<string, string> = {}) => testApp.app.inject({ method: 'GET', url, headers });
/** Absolute URLs in a text, without the Markdown punctuation around them. */
const urlsIn = (text: string) => [...text.matchAll(/https?:\/\/[^\s)>`"']+/g)].map((match) => match[0].replace(/[.,;:]+$/, ''));

describe('GET /', () => {
  it('is HTML from the studio profile, with the security headers, short-cached and revalidatable', async () => {
    testApp = await start();
    const response = await get('/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    const html = response.body;
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toContain(`<h1>${exampleStudioProfile.name}</h1>`);
    expect(html).toContain(exampleStudioProfile.description);
    for (const service of exampleStudioProfile.services) expect(html).toContain(service.name);
    const etag = String(response.headers.etag);
    const again = await get('/', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // RFC 9110 §13.1.2: "*" matches any current representation; another tag does not.
    expect((await get('/', { 'if-none-match': '*' })).statusCode).toBe(304);
    expect((await get('/', { 'if-none-match': '"other", W/"else"' })).statusCode).toBe(200);
    expect((await get('/', { 'if-none-match': `"other", W/${etag}` })).statusCode).toBe(304);
  });

  it('has no inline script or style, and no address outside this service', async () => {
    testApp = await start();
    const html = (await get('/')).body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((match) => match[1]);
    const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((match) => match[1]);
    expect(scripts).toEqual(
      ['counter', 'signals', 'site'].map((name) => expect.stringMatching(new RegExp(`^/assets/${name}\\.js\\?v=[0-9a-f]{12}$`))),
    );
    expect(styles).toEqual(['base', 'site'].map((name) => expect.stringMatching(new RegExp(`^/assets/${name}\\.css\\?v=[0-9a-f]{12}$`))));
    // The only absolute addresses: the canonical link and the studio's own website.
    expect(new Set(urlsIn(html))).toEqual(new Set([`${BASE}/`, exampleStudioProfile.website.replace(/\/?$/, '/')]));
  });

  it('has a honeypot field out of sight, of the tab order and of the accessibility tree, and out of the body the form sends', async () => {
    testApp = await start();
    const html = (await get('/')).body;
    const trap = /<div class="form__trap"([^>]*)>([\s\S]*?)<\/div>/.exec(html);
    expect(trap?.[1]).toBe(' aria-hidden="true" inert');
    expect(trap?.[2]).toContain('<input id="website" name="website" type="text" tabindex="-1" autocomplete="off" readonly data-honeypot>');
    expect(trap?.[2]).not.toContain('data-field');
    expect(html.indexOf('class="form__trap"')).toBeGreaterThan(html.indexOf('<form id="inquiry-form"'));
    expect(html.indexOf('class="form__trap"')).toBeLessThan(html.indexOf('</form>'));
  });

  it('gives each field a label and the maximum length of the Inquiry schema, and states the message’s', async () => {
    testApp = await start();
    const html = (await get('/')).body;
    const expected = {
      firstName: INQUIRY_LIMITS.nameMaxLength,
      lastName: INQUIRY_LIMITS.nameMaxLength,
      email: INQUIRY_LIMITS.emailMaxLength,
      company: INQUIRY_LIMITS.companyMaxLength,
      message: INQUIRY_LIMITS.messageMaxLength,
    };
    for (const [name, maxLength] of Object.entries(expected)) {
      expect(html).toMatch(new RegExp(`<label class="field__label" for="${name}">`));
      expect(html).toMatch(new RegExp(`<(input|textarea) id="${name}" name="${name}" data-max-length="${maxLength}"`));
    }
    // No maxlength: browsers cut a longer paste without a word, counting UTF-16 units, not characters.
    expect(html).not.toContain('maxlength');
    expect(html).toMatch(/<textarea id="message"[^>]* aria-describedby="message-hint message-count"/);
    expect(html).toContain('<p class="field__count" id="message-count">Up to 10,000 characters</p>');
    expect(html).toContain('action="/api/contact" method="post"');
    // Hidden until site.js takes it over: without the script it could only post form data to a JSON
    // API. Until then (or if the script never runs) the email address stands in its place.
    expect(html).toMatch(/<form id="inquiry-form"[^>]* hidden[ >]/);
    expect(html).toMatch(/<p id="inquiry-fallback" class="notice">Email us at <a href="mailto:[^"]+">/);
    expect(html).not.toContain('<noscript>');
  });

  it('escapes every profile value and links the website only when it is http(s)', async () => {
    const dir = tempDir();
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'profile.json');
    const evil = '<script>alert("x")</script> & \'quotes\'';
    writeFileSync(
      path,
      JSON.stringify({
        name: `Studio ${evil}`,
        description: `Description ${evil}`,
        location: `Location ${evil}`,
        website: 'javascript:alert(1)',
        email: "o'brien+x@studio.example",
        responseTime: `2 days ${evil}`,
        services: [{ name: `Service ${evil}`, description: `Does ${evil}` }],
      }),
    );
    testApp = await start({ STUDIO_PROFILE: path });
    const html = (await get('/')).body;
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('javascript:');
    expect(html).toContain('Studio &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
    for (const label of ['Description', 'Location', '2 days', 'Service', 'Does']) {
      expect(html).toContain(`${label} &lt;script&gt;`);
    }
    expect(html).toContain('href="mailto:o&#39;brien%2Bx@studio.example"');
    const llms = (await get('/llms.txt')).body;
    expect(llms).toContain('# Studio <script>'); // plain text: no HTML escaping, nothing is rendered
  });
});

describe('assets', () => {
  const types: Record<keyof typeof ASSET_FILES, RegExp> = {
    'base.css': /^text\/css; charset=utf-8$/,
    'site.css': /^text\/css; charset=utf-8$/,
    'counter.js': /^text\/javascript; charset=utf-8$/,
    'signals.js': /^text\/javascript; charset=utf-8$/,
    'site.js': /^text\/javascript; charset=utf-8$/,
    'favicon.svg': /^image\/svg\+xml/,
  };

  it.each(Object.keys(types) as (keyof typeof ASSET_FILES)[])(
    '%s: its content type, cached for a year under its versioned URL, for an hour without',
    async (file) => {
      testApp = await start();
      const html = (await get('/')).body;
      const versioned = new RegExp(`/assets/${file.replace('.', '\\.')}\\?v=[0-9a-f]{12}`).exec(html)?.[0];
      expect(versioned).toBeDefined();
      const response = await get(String(versioned));
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(types[file]);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.body.length).toBeGreaterThan(100);

      const unversioned = await get(`/assets/${file}`);
      expect(unversioned.statusCode).toBe(200);
      expect(unversioned.headers['cache-control']).toBe('public, max-age=3600');
      expect(unversioned.body).toBe(response.body);

      const revalidated = await get(String(versioned), { 'if-none-match': String(response.headers.etag) });
      expect(revalidated.statusCode).toBe(304);
      expect(revalidated.body).toBe('');
    },
  );

  it("serves the proof-of-work worker and every module it imports, from this service, altcha-lib's with its licence", async () => {
    testApp = await start();
    const html = (await get('/')).body;
    const worker = /data-pow-worker="(\/assets\/pow\/worker\.js\?v=[0-9a-f]{12})"/.exec(html)?.[1];
    expect(worker).toBeDefined();
    expect(html).toContain('data-challenge-url="/api/contact/challenge"');
    const entry = await get(String(worker));
    expect(entry.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // Each module's imports, followed from the entry as the browser resolves them.
    const toVisit = [new URL(String(worker), BASE).pathname];
    const served = new Set<string>();
    while (toVisit.length > 0) {
      const path = String(toVisit.pop());
      if (served.has(path)) continue;
      const response = await get(path);
      expect(response.statusCode, path).toBe(200);
      expect(response.headers['content-type'], path).toBe('text/javascript; charset=utf-8');
      expect(response.headers['content-security-policy'], path).toContain("script-src 'self'");
      if (path !== '/assets/pow/worker.js')
        expect(response.body, path).toMatch(/^\/\*! altcha-lib \d+\.\d+\.\d+ \| MIT License \| Copyright/);
      served.add(path);
      for (const [, target] of response.body.matchAll(/^import [^'"]*['"]([^'"]+)['"]/gm))
        toVisit.push(new URL(String(target), `${BASE}${path}`).pathname);
    }
    expect([...served].sort()).toEqual(
      [
        '/assets/pow/worker.js',
        '/assets/pow/pow.js',
        '/assets/pow/helpers.js',
        '/assets/pow/types.js',
        '/assets/pow/workers/shared.js',
        '/assets/pow/algorithms/web/pbkdf2.js',
      ].sort(),
    );
    // Node's own PBKDF2 module is not among them: it would not load in a browser.
    expect((await get('/assets/pow/algorithms/pbkdf2.js')).statusCode).toBe(404);
  });

  it('serves nothing else under /assets/', async () => {
    testApp = await start();
    for (const url of ['/assets/', '/assets/page.ts', '/assets/../app.ts', '/assets/site.css.map']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('GET /robots.txt', () => {
  it('allows everything, as plain text, and names only addresses that exist', async () => {
    testApp = await start();
    const response = await get('/robots.txt');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    const lines = response.body.split('\n');
    expect(lines).toContain('User-agent: *');
    expect(lines).toContain('Allow: /');
    expect(lines.filter((line) => /^disallow:\s*\S/i.test(line))).toEqual([]);
    expect(response.body).not.toMatch(/^sitemap:/im);
    for (const url of urlsIn(response.body)) {
      expect(url.startsWith(`${BASE}/`)).toBe(true);
      expect((await get(url.slice(BASE.length))).statusCode, url).toBe(200);
    }
  });
});

describe('GET /llms.txt', () => {
  it('maps the interface for agents with addresses from PUBLIC_URL', async () => {
    testApp = await start();
    const response = await get('/llms.txt');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    const text = response.body;
    expect(text.startsWith(`# ${exampleStudioProfile.name}\n`)).toBe(true);
    expect(text).toContain(`POST ${BASE}/api/contact`);
    for (const field of ['firstName', 'lastName', 'email', 'company', 'message']) expect(text).toContain(`\`${field}\``);
    expect(text).toContain(`1–${INQUIRY_LIMITS.nameMaxLength} characters`);
    expect(text).toContain('Idempotency-Key');
    for (const path of [
      '/mcp',
      '/mcp/verified',
      '/.well-known/mcp/server-card.json',
      '/.well-known/mcp/catalog.json',
      '/openapi.json',
      '/docs',
      '/auth.md',
      '/.well-known/api-catalog',
      '/llms.txt',
    ]) {
      expect(text).toContain(`(${BASE}${path})`);
    }
    for (const service of exampleStudioProfile.services) expect(text).toContain(`- ${service.name}: ${service.description}`);
    // Every address is this service's, and none is a path the text made up.
    const paths = new Set(urlsIn(text).map((url) => (url.startsWith(`${BASE}/`) ? url.slice(BASE.length) : url)));
    expect(paths).toEqual(
      new Set([
        '/api/contact',
        '/mcp',
        '/mcp/verified',
        '/.well-known/mcp/server-card.json',
        '/.well-known/mcp/catalog.json',
        '/openapi.json',
        '/docs',
        '/auth.md',
        '/',
        '/.well-known/api-catalog',
        '/llms.txt',
      ]),
    );
  });

  it('follows another PUBLIC_URL', async () => {
    testApp = await start({ PUBLIC_URL: 'https://inquiries.northlight.example/' });
    const text = (await get('/llms.txt')).body;
    expect(text).toContain('POST https://inquiries.northlight.example/api/contact');
    expect(urlsIn(text).every((url) => url.startsWith('https://inquiries.northlight.example/'))).toBe(true);
  });
});

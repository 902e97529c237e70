// GET /auth.md: the agent walk-through names only real endpoints, every error code, and working curl
// lines. The route is served by a minimal Fastify instance here (src/app.ts registers it separately).
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { authMarkdown } from '../../src/auth/auth-md.js';
import { authUrls } from '../../src/auth/urls.js';
import { authMdRoute } from '../../src/http/routes/auth-md.js';
import { INQUIRY_LIMITS } from '../../src/inquiries/schema.js';
import { exampleStudioProfile, type StudioProfile } from '../../src/studio/profile.js';
import { startTestApp } from '../helpers/app.js';

const PUBLIC_URL = 'https://studio.example';
const urls = authUrls(PUBLIC_URL);

let app: FastifyInstance;
let response: LightMyRequestResponse;
let text: string;
beforeAll(async () => {
  app = Fastify();
  await app.register(authMdRoute, {
    publicUrl: PUBLIC_URL,
    profile: exampleStudioProfile,
    features: { emailEnabled: true, idJagEnabled: true },
  });
  await app.ready();
  response = await app.inject({ method: 'GET', url: '/auth.md' });
  text = response.body;
});
afterAll(async () => {
  await app.close();
});

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every URL on the public host, cut at quotes, backticks, brackets and whitespace, without trailing punctuation. */
function publicUrlsIn(markdown: string, base: string): string[] {
  const pattern = new RegExp(`${escapeRegExp(base)}[^\\s'"\`<>()\\[\\]|]*`, 'g');
  return [...markdown.matchAll(pattern)].map(([url]) => url.replace(/[.,;:]+$/, ''));
}

describe('GET /auth.md', () => {
  it('answers 200 Markdown in UTF-8', () => {
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/markdown; charset=utf-8');
  });

  it('is cacheable and open to any origin', () => {
    expect(response.headers['cache-control']).toBe('public, max-age=3600');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('opens with the H1 "auth.md — <studio name>"', () => {
    const h1 = text.split('\n').find((line) => line.startsWith('# '));
    expect(h1).toBe(`# auth.md — ${exampleStudioProfile.name}`);
    expect(h1).toContain('auth.md');
    expect(text.startsWith(`${h1}\n`)).toBe(true);
  });

  it('names no endpoint that does not exist', () => {
    const allowed = new Set<string>([...Object.values(urls), `${urls.issuer}/api/contact`, urls.mcpResource]);
    const found = publicUrlsIn(text, PUBLIC_URL);
    expect(found.length).toBeGreaterThan(20);
    expect(found.filter((url) => !allowed.has(url))).toEqual([]);
  });

  it('points to every discovery document', () => {
    for (const url of [
      urls.protectedResourceMetadata,
      urls.mcpProtectedResourceMetadata,
      urls.authorizationServerMetadata,
      urls.mcpVerifiedProtectedResourceMetadata,
      urls.jwksUri,
    ]) {
      expect(text).toContain(url);
    }
  });

  it('names every agent-auth endpoint (docs/agent-auth.md)', () => {
    for (const path of ['/api/contact', '/agent/register', '/agent/claim', '/oauth/token', '/oauth/revoke', '/mcp']) {
      expect(text).toContain(`${PUBLIC_URL}${path}`);
    }
  });

  it('lists every error code with a row in the error table', () => {
    const codes = [
      'invalid_request',
      'unsupported_identity_type',
      'unsupported_assertion_type',
      'invalid_assertion',
      'issuer_not_enabled',
      'replay_detected',
      'rate_limited',
      'invalid_claim_token',
      'otp_invalid',
      'claim_expired',
      'previously_claimed',
      'invalid_grant',
      'unsupported_grant_type',
      'invalid_scope',
      'invalid_target',
      'invalid_token',
      'invalid_json',
      'invalid_idempotency_key',
      'payload_too_large',
      'unsupported_media_type',
      'idempotency_key_reused',
      'inquiry_not_stored',
    ];
    const table = text.slice(text.indexOf('## 9. Error codes'));
    for (const code of codes) expect(table).toMatch(new RegExp(`^\\| \`${code}\` \\| \\d{3}`, 'm'));
  });

  it('gives the statuses, fields and headers of the agent-auth endpoints (docs/agent-auth.md)', () => {
    for (const needle of [
      'identity_assertion_expires',
      'claim_token_expires',
      'claim_uri',
      '"status":"pending"',
      '"status":"initiated"',
      '"status":"claimed"',
      '"registration_type":"anonymous"',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'subject_token_type=urn:ietf:params:oauth:token-type:jwt',
      'urn:ietf:params:oauth:token-type:id-jag',
      '"token_type":"Bearer","expires_in":3600',
      'Cache-Control: no-store',
      'typ: at+jwt',
      'token_type_hint',
      'Idempotency-Key',
      'TRUSTED_ISSUERS',
      'RATE_LIMIT_INQUIRIES',
      'Retry-After',
      'never fetches',
      `WWW-Authenticate: Bearer error="invalid_token", resource_metadata="${urls.protectedResourceMetadata}"`,
    ]) {
      expect(text).toContain(needle);
    }
    for (const status of ['201 Created', '202 Accepted', '`202`', '`200`', '401', '409', '410', '413', '415', '422', '429', '500']) {
      expect(text).toContain(status);
    }
  });

  it('states the real limits', () => {
    expect(text).toContain(`${BODY_LIMIT_BYTES / 1024} KiB`);
    expect(text).toContain('16 KiB');
    expect(text).toContain('5 per 10 minutes');
    for (const limit of Object.values(INQUIRY_LIMITS)) expect(text).toContain(String(limit));
    // The caps on mailed codes (src/auth/limits.ts), SERVICE_MAIL_LIMIT at its default.
    expect(text).toContain('at gmail.com and googlemail.com, dots in it aside) 3 per 15 min, 10 per 24 h');
    expect(text).toContain('to one domain, whichever of its addresses, 10 per 15 min, 50 per 24 h');
    expect(text).toContain('by this service, to anyone, 200 per 1 h');
    expect(text).toContain('per domain: 10 per 15 min, 50 per 24 h; per claim: 5 per 24 h; by the whole service: 200 per 1 h');
  });

  it('has copy-paste curl lines on the public URL, inside closed code blocks', () => {
    const fences = text.split('\n').filter((line) => line.startsWith('```'));
    expect(fences.length % 2).toBe(0);
    const curlLines = text.split('\n').filter((line) => /^\s*curl\b/.test(line));
    expect(curlLines.length).toBeGreaterThanOrEqual(12);
    for (const line of curlLines) {
      expect(line.startsWith('curl ')).toBe(true);
      expect(line).toContain(` ${PUBLIC_URL}/`);
    }
  });
});

describe('authMarkdown', () => {
  it('takes every address from AuthUrls and the name from the profile', () => {
    const profile: StudioProfile = { ...exampleStudioProfile, name: 'Harbour & Pine' };
    const other = authMarkdown(authUrls('https://other.test/studio/'), profile);
    expect(other.split('\n')[0]).toBe('# auth.md — Harbour & Pine');
    expect(other).not.toContain('studio.example');
    expect(other).not.toContain(exampleStudioProfile.name);
    expect(other).not.toContain('localhost');
    expect(other).toContain('curl -s https://other.test/studio/api/contact');
    expect(other).toContain('https://other.test/studio/.well-known/oauth-protected-resource/mcp');
  });
});

describe('the real app', () => {
  it('serves the same text at /auth.md', async () => {
    const testApp = await startTestApp({ env: { PUBLIC_URL }, startWorker: false });
    try {
      const real = await testApp.app.inject({ method: 'GET', url: '/auth.md' });
      expect(real.statusCode).toBe(200);
      // No SMTP and no trusted issuers in this app.
      expect(real.body).toBe(authMarkdown(urls, testApp.profile, { emailEnabled: false, idJagEnabled: false }));
    } finally {
      await testApp.close();
    }
  });
});

describe('SERVICE_MAIL_LIMIT', () => {
  it('is stated as configured', async () => {
    const env = { PUBLIC_URL, SMTP_URL: 'smtp://127.0.0.1:9', INQUIRY_TO: 'studio@example.com', SERVICE_MAIL_LIMIT: '50' };
    const testApp = await startTestApp({ env, startWorker: false });
    try {
      const real = (await testApp.app.inject({ method: 'GET', url: '/auth.md' })).body;
      expect(real).toContain('by this service, to anyone, 50 per 1 h');
      expect(real).toContain('by the whole service: 50 per 1 h');
      expect(real).not.toContain('200 per 1 h');
    } finally {
      await testApp.close();
    }
  });
});

describe('without email or trusted issuers', () => {
  it('says that verified_email and claims are not available without email', () => {
    const text = authMarkdown(urls, exampleStudioProfile, { emailEnabled: false, idJagEnabled: true });
    expect(text).toContain('This deployment sends no email');
    expect(text).not.toContain('This deployment trusts no identity provider');
    expect(authMarkdown(urls, exampleStudioProfile)).not.toContain('This deployment sends no email');
  });

  it('says that ID-JAGs are not available without trusted issuers', () => {
    const text = authMarkdown(urls, exampleStudioProfile, { emailEnabled: true, idJagEnabled: false });
    expect(text).toContain('This deployment trusts no identity provider');
    expect(text).not.toContain('This deployment sends no email');
    expect(authMarkdown(urls, exampleStudioProfile)).not.toContain('This deployment trusts no identity provider');
  });
});

// The inbox's sign-in in process (docs/inbox.md): who sees what before signing in, links that work
// once, the session cookie, sign-out, the CLI's revocation of every session, and the headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { FORM, form, linkToken, ORIGIN, signIn } from '../helpers/inbox.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { INBOX_USERS: 'studio@example.com, Partner@Example.com' } });
});
afterAll(() => t.close());

const get = (url: string, cookie?: string) => t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers: { 'content-type': FORM, origin: ORIGIN, ...headers }, payload: form(fields) });

describe('before signing in', () => {
  it('shows the sign-in form, private, never stored, not indexed, under the strict CSP', async () => {
    const page = await get('/inbox');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="email">Email address</label>');
    expect(page.body).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(page.headers['cache-control']).toBe('private, no-store');
    expect(page.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost:3000)/);
  });

  it('answers 401 with the sign-in form for every other page, and 401 JSON for the live updates', async () => {
    for (const url of ['/inbox/inquiries/INQ-7K2M9Q', '/inbox/export?format=csv']) {
      const page = await get(url);
      expect(page.statusCode).toBe(401);
      expect(page.body).toContain('Mail me a sign-in link');
    }
    expect((await get('/inbox/updates')).statusCode).toBe(401);
  });

  it('answers a sign-in request the same whether the address may sign in or not', async () => {
    const user = await post('/inbox/sign-in', { email: 'studio@example.com' });
    const stranger = await post('/inbox/sign-in', { email: 'someone@example.org' });
    expect(user.statusCode).toBe(200);
    expect(stranger.statusCode).toBe(200);
    expect(stranger.body).toBe(user.body);
    expect(user.body).toContain('Check your mail');
  });

  it('refuses a sign-in request from another origin, or without one, and a form that is not an address', async () => {
    expect((await post('/inbox/sign-in', { email: 'studio@example.com' }, { origin: 'https://evil.example' })).statusCode).toBe(403);
    const none = await t.app.inject({
      method: 'POST',
      url: '/inbox/sign-in',
      headers: { 'content-type': FORM },
      payload: form({ email: 'a@b.c' }),
    });
    expect(none.statusCode).toBe(403);
    const cross = await post('/inbox/sign-in', { email: 'a@b.c' }, { origin: 'null', 'sec-fetch-site': 'cross-site' });
    expect(cross.statusCode).toBe(403);
    // A browser's own page under Referrer-Policy: no-referrer sends Origin "null", and says same-origin by Fetch Metadata.
    expect((await post('/inbox/sign-in', { email: 'a@b.c' }, { origin: 'null', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
    expect((await post('/inbox/sign-in', { email: 'not an address' })).statusCode).toBe(400);
  });

  it('shows a link only as a button, spending nothing on a GET', async () => {
    const token = await linkToken(t.services, 'studio@example.com');
    const page = await get(`/inbox/sign-in?token=${token}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`name="token" value="${token}"`);
    expect((await post('/inbox/session', { token })).statusCode).toBe(303);
    expect((await get('/inbox/sign-in?token=short')).statusCode).toBe(400);
  });
});

describe('a sign-in link', () => {
  it('works once, for an address in any case, and sets a strict session cookie', async () => {
    const token = await linkToken(t.services, 'PARTNER@example.com');
    const first = await post('/inbox/session', { token });
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe('/inbox');
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toMatch(/^inbox-session=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/inbox; HttpOnly; SameSite=Strict$/);
    const again = await post('/inbox/session', { token });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('has been used or has expired');
  });

  it("leads to the inquiry asked for before signing in (the notification mail's link), and nowhere else", async () => {
    const asked = await get('/inbox/inquiries/INQ-7K2M9Q');
    expect(asked.body).toContain('<input type="hidden" name="next" value="/inbox/inquiries/INQ-7K2M9Q">');
    const token = await linkToken(t.services, 'studio@example.com');
    expect((await get(`/inbox/sign-in?token=${token}&next=%2Finbox%2Finquiries%2FINQ-7K2M9Q`)).body).toContain(
      'name="next" value="/inbox/inquiries/INQ-7K2M9Q"',
    );
    const signedIn = await post('/inbox/session', { token, next: '/inbox/inquiries/INQ-7K2M9Q' });
    expect(signedIn.headers.location).toBe('/inbox/inquiries/INQ-7K2M9Q');
    for (const next of [
      'https://evil.example/',
      '//evil.example/inbox/inquiries/INQ-7K2M9Q',
      '/inbox/inquiries/INQ-7K2M9Q/../../x',
      '/inbox/overview',
    ]) {
      const answer = await post('/inbox/session', { token: await linkToken(t.services, 'studio@example.com'), next });
      expect(answer.headers.location, next).toBe('/inbox');
    }
    expect((await get(`/inbox/sign-in?token=${token}&next=https%3A%2F%2Fevil.example`)).body).not.toContain('name="next"');
  });

  it('is not given for an address that may not sign in, and a made-up token opens nothing', async () => {
    expect(await t.services.inbox?.access.printableLink('someone@example.org')).toBeNull();
    expect((await post('/inbox/session', { token: 'A'.repeat(43) })).statusCode).toBe(400);
  });

  it('cannot be spent from another origin', async () => {
    const token = await linkToken(t.services, 'studio@example.com');
    expect((await post('/inbox/session', { token }, { origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await post('/inbox/session', { token })).statusCode).toBe(303);
  });
});

describe('a session', () => {
  it('opens the inbox until signed out, which needs the CSRF token and the inbox origin', async () => {
    const { cookie, csrf } = await signIn(t.app, t.services, 'studio@example.com');
    const list = await get('/inbox', cookie);
    expect(list.body).toContain('<h1>Inquiries</h1>');
    expect((await post('/inbox/sign-out', { _csrf: 'wrong' }, { cookie })).statusCode).toBe(403);
    expect((await post('/inbox/sign-out', { _csrf: csrf }, { cookie, origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await get('/inbox', cookie)).body).toContain('<h1>Inquiries</h1>');
    const out = await post('/inbox/sign-out', { _csrf: csrf }, { cookie });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/^inbox-session=; Max-Age=0;/);
    expect((await get('/inbox', cookie)).body).toContain('Mail me a sign-in link');
  });

  it("ends for everyone when every session is revoked (the CLI's sessions revoke --all)", async () => {
    const { cookie } = await signIn(t.app, t.services, 'studio@example.com');
    const { createInboxStore } = await import('../../src/storage/inbox-store.js');
    const { openExistingDatabase } = await import('../../src/storage/database.js');
    const opened = await openExistingDatabase(t.config.database);
    try {
      expect(await createInboxStore(opened).deleteAllSessions()).toBeGreaterThan(0);
    } finally {
      await opened.db.destroy();
    }
    expect((await get('/inbox/inquiries/INQ-7K2M9Q', cookie)).statusCode).toBe(401);
  });
});

describe('the logs', () => {
  it('never hold a sign-in token, though every other request is logged', async () => {
    const logLines: string[] = [];
    const logged = await startTestApp({ env: { INBOX_USERS: 'studio@example.com', LOG_LEVEL: 'info' }, logLines });
    try {
      const token = await linkToken(logged.services, 'studio@example.com');
      await logged.app.inject({ method: 'GET', url: `/inbox/sign-in?token=${token}` });
      await logged.app.inject({
        method: 'POST',
        url: '/inbox/session',
        headers: { 'content-type': FORM, origin: ORIGIN },
        payload: form({ token }),
      });
      await logged.app.inject({ method: 'GET', url: '/inbox' });
      expect(logLines.some((line) => line.includes('"url":"/inbox"'))).toBe(true);
      expect(logLines.filter((line) => line.includes(token))).toEqual([]);
    } finally {
      await logged.close();
    }
  });
});

describe('without anyone to sign in', () => {
  it('has no inbox at all', async () => {
    const bare = await startTestApp();
    try {
      expect((await bare.app.inject({ method: 'GET', url: '/inbox' })).statusCode).toBe(404);
    } finally {
      await bare.close();
    }
  });
});

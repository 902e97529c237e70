// The inbox's list, one inquiry and its actions in process (docs/inbox.md): search and filters, keyset
// pages, escaping, the state and verdict changes (each refused without the CSRF token or from another
// origin), requeue, erase behind its confirmation, and the export of the list as filtered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioTimeShort } from '../../src/studio/time.js';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { FORM, form, ORIGIN, type SignedIn, signIn } from '../helpers/inbox.js';
import { TEST_WEBHOOK_SECRET } from '../helpers/webhook.js';

let t: TestApp;
let user: SignedIn;
const references: Record<string, string> = {};

async function submit(key: string, overrides: Record<string, unknown>) {
  const answer = await t.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry(overrides) });
  expect(answer.statusCode).toBe(200);
  references[key] = referenceOf(answer.body);
}

beforeAll(async () => {
  // A webhook at a closed port, its worker not started: every delivery waits, queued.
  const webhook = { WEBHOOK_URL: 'http://127.0.0.1:9/never', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };
  // A zone half an hour off whole hours: times must be shown in it, not in UTC.
  const env = { INBOX_USERS: 'studio@example.com', STUDIO_TIMEZONE: 'Asia/Kolkata', ...webhook };
  t = await startTestApp({ env, startWorker: false });
  await submit('ada', {});
  await submit('grace', {
    firstName: 'Grace',
    lastName: 'Hopper',
    email: 'grace@navy.example',
    company: 'Navy',
    message: 'A compiler for the fleet.\nSecond line.',
  });
  await submit('xss', {
    firstName: '<script>alert(1)</script>',
    lastName: 'Mallory',
    email: 'm@example.org',
    company: '"><img src=x>',
    message: 'Ünïcode façade <b>bold</b>',
  });
  user = await signIn(t.app, t.services, 'studio@example.com');
}, 60_000);
afterAll(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: user.cookie } });
const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': FORM, origin: ORIGIN, cookie: user.cookie, ...headers },
    payload: form(fields),
  });
const change = (url: string, fields: Record<string, string> = {}) => post(url, { _csrf: user.csrf, ...fields });

describe('the list', () => {
  it('shows every inquiry newest first, escaped, with its first line, source and delivery state', async () => {
    const page = await get('/inbox');
    expect(page.statusCode).toBe(200);
    const order = [references.xss, references.grace, references.ada].map((reference) => page.body.indexOf(reference as string));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] as number)))).toBe(true);
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Mallory');
    expect(page.body).toContain('&quot;&gt;&lt;img src=x&gt;');
    expect(page.body).toContain('A compiler for the fleet.</td>');
    expect(page.body).toContain('the HTTP API');
    expect(page.body).toContain('<span class="delivery delivery--wait">webhook queued</span>');
  });

  it('searches names, addresses, companies and messages by word prefixes, in any case and accent', async () => {
    const found = async (q: string) => {
      const body = (await get(`/inbox?q=${encodeURIComponent(q)}`)).body;
      return Object.entries(references)
        .filter(([, reference]) => body.includes(reference))
        .map(([key]) => key)
        .sort();
    };
    expect(await found('grace')).toEqual(['grace']);
    expect(await found('NAVY.example')).toEqual(['grace']);
    expect(await found('hop')).toEqual(['grace']);
    expect(await found('engine website')).toEqual(['ada']);
    expect(await found('unicode facade')).toEqual(['xss']);
    expect(await found('analytical')).toEqual(['ada']);
    expect(await found('nobody-matches-this')).toEqual([]);
    expect(await found('"*) ^ (')).toEqual(['ada', 'grace', 'xss']); // no words: every inquiry
    expect(await found('"OR" NEAR(')).toEqual([]); // words, never the index's syntax
  });

  it('filters by source and status, and pages by keyset', async () => {
    expect((await get('/inbox?source=page')).body).toContain('No inquiries match.');
    expect((await get('/inbox?source=api')).body).toContain(references.ada);
    expect((await get('/inbox?status=spam')).body).toContain('No inquiries match.');
    const older = await get(`/inbox?after=${Date.now() + 60_000}.INQ-000000`);
    expect(older.body).toContain(references.ada);
    expect(older.body).toContain('>Newest</a>');
  });

  it('charts the last 90 days by source with the numbers as text and as a table', async () => {
    const page = await get('/inbox/overview');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<svg class="chart" viewBox="0 0 900 260" role="img" aria-labelledby="chart-title chart-desc"/);
    expect(page.body).toContain('<title id="chart-title">Inquiries per day, last 90 days, by source</title>');
    expect(page.body).toContain('3 inquiries from');
    expect(page.body).toContain('0 through the contact page, 3 through the HTTP API');
    const today = new Date().toISOString().slice(0, 10);
    expect(page.body).toContain(`<tr><th scope="row">${today}</th><td>0</td><td>3</td><td>0</td><td>0</td><td>3</td></tr>`);
    expect((page.body.match(/<rect /g) ?? []).length).toBe(1);
  });

  it('refuses what it does not understand with a 400 page', async () => {
    for (const query of ['status=deleted', 'source=fax', 'after=yesterday', 'colour=red', 'q=a&q=b', `q=${'x'.repeat(201)}`]) {
      const page = await get(`/inbox?${query}`);
      expect(page.statusCode, query).toBe(400);
      expect(page.headers['content-type']).toContain('text/html');
    }
  });

  it('gives the rows newer than the newest shown, for the live updates', async () => {
    const all = (await get('/inbox/updates')).json();
    expect(all.rows).toHaveLength(3);
    const newest = all.rows[0].cursor;
    expect((await get(`/inbox/updates?since=${newest}`)).json().rows).toEqual([]);
    expect((await get(`/inbox/updates?since=${all.rows[2].cursor}`)).json().rows).toHaveLength(2);
    expect((await get('/inbox/updates?since=nonsense')).statusCode).toBe(400);
  });

  it('exports the list as filtered, as CSV guarded against formulas and as JSON', async () => {
    const csv = await get('/inbox/export?format=csv&q=grace');
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="inquiries-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('reference,receivedAt,firstName,lastName,email,company,message,clientId,deliveries,status,source,agentName');
    expect(lines).toHaveLength(2); // the header and Grace's, her message's line break quoted
    expect(csv.body).toContain(`${references.grace},`);
    const json = (await get('/inbox/export?format=json')).json();
    expect(json.map((entry: { reference: string }) => entry.reference)).toEqual([references.xss, references.grace, references.ada]);
    expect(json[0]).toMatchObject({ firstName: '<script>alert(1)</script>', status: 'new', source: 'api', agentName: null });
    expect(json[0].deliveries).toMatchObject([{ channel: 'webhook', status: 'pending', attempts: 0 }]);
    expect((await get('/inbox/export?format=xml')).statusCode).toBe(400);
  });
});

describe('one inquiry', () => {
  it('shows every field, reads it, and offers a reply with the reference in the subject', async () => {
    const page = await get(`/inbox/inquiries/${references.grace}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('grace@navy.example');
    expect(page.body).toContain('A compiler for the fleet.\nSecond line.');
    expect(page.body).toContain(`href="mailto:grace@navy.example?subject=Re%3A%20your%20inquiry%20${references.grace}"`);
    expect(page.body).toContain('Mark as unread'); // opened: read
    const [, iso, shown] = /<time datetime="([^"]+)">([^<]+)<\/time>/.exec(page.body) ?? [];
    expect(shown).toBe(studioTimeShort(new Date(iso as string), 'Asia/Kolkata'));
    expect(shown).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d GMT\+5:30$/);
    expect((await get(`/inbox/inquiries/${references.grace?.toLowerCase()}`)).statusCode).toBe(200);
  });

  it('answers 404 for an unknown or malformed reference', async () => {
    expect((await get('/inbox/inquiries/INQ-000000')).statusCode).toBe(404);
    const odd = await get('/inbox/inquiries/%3Cb%3E');
    expect(odd.statusCode).toBe(404);
    expect(odd.body).toContain('&lt;b&gt;');
  });

  it('changes state, archives and moves to spam and back, each answered with a note', async () => {
    const url = `/inbox/inquiries/${references.ada}`;
    const archived = await change(`${url}/state`, { state: 'archived' });
    expect(archived.statusCode).toBe(303);
    expect(archived.headers.location).toBe(`${url}?done=archived`);
    expect((await get('/inbox?status=archived')).body).toContain(references.ada);
    expect((await get('/inbox')).body).not.toContain(references.ada);
    expect((await get(`${url}?done=archived`)).body).toContain('Archived.');
    expect((await change(`${url}/verdict`, { verdict: 'spam' })).headers.location).toBe(`${url}?done=spam`);
    expect((await get('/inbox?status=spam')).body).toContain(references.ada);
    expect((await change(`${url}/verdict`, { verdict: 'spam' })).headers.location).toBe(`${url}?done=unchanged`);
    expect((await change(`${url}/verdict`, { verdict: 'inbox' })).headers.location).toBe(`${url}?done=released`);
    expect((await change(`${url}/requeue`)).headers.location).toBe(`${url}?done=nothing`);
  });

  it('refuses a change without the CSRF token, from another origin, or with an unknown value', async () => {
    const url = `/inbox/inquiries/${references.xss}/state`;
    expect((await post(url, { state: 'archived' })).statusCode).toBe(403);
    expect((await post(url, { state: 'archived', _csrf: `${user.csrf}x` })).statusCode).toBe(403);
    expect((await post(url, { state: 'archived', _csrf: user.csrf }, { origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await change(url, { state: 'deleted' })).statusCode).toBe(400);
    expect((await change(`/inbox/inquiries/${references.xss}/verdict`, { verdict: 'maybe' })).statusCode).toBe(400);
    expect((await change('/inbox/inquiries/INQ-000000/state', { state: 'read' })).statusCode).toBe(404);
    const json = await t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', origin: ORIGIN, cookie: user.cookie },
      payload: '{}',
    });
    expect(json.statusCode).toBe(403); // no form field, so no CSRF token
    expect((await get('/inbox?status=new')).body).toContain(references.xss); // none of them changed it
  });

  it('erases the person only once confirmed', async () => {
    const url = `/inbox/inquiries/${references.xss}/erase`;
    expect((await get(url)).body).toContain('Erase m@example.org?');
    expect((await change(url)).statusCode).toBe(400);
    const erased = await change(url, { confirm: 'yes' });
    expect(erased.statusCode).toBe(200);
    expect(erased.body).toContain('Everything held about m@example.org is erased: 1 inquiry');
    expect((await get(`/inbox/inquiries/${references.xss}`)).statusCode).toBe(404);
    expect((await get('/inbox?q=mallory')).body).toContain('No inquiries match.');
  });
});

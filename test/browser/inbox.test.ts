// The inbox in Chromium (docs/inbox.md), against the real app mailing through a real SMTP server:
// sign-in with the mailed link, search, open, release a quarantined inquiry and see its mail, live
// arrivals, erase, export, sign out, an expired session and a CSRF attempt; axe on every page, 375 px.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { axeViolations } from '../helpers/axe.js';
import { launchChromium, launched } from '../helpers/browser.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { SEO_PITCH } from '../helpers/spam.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const STUDIO = 'studio@example.com';
const MOBILE = { width: 375, height: 812 };

let launch: Awaited<ReturnType<typeof launchChromium>> = {};
let t: TestApp;
let smtp: TestSmtpServer;
let base: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  smtp = await startSmtpServer();
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  t = await startTestApp({
    listen: true,
    port: reserved.port,
    env: { SMTP_URL: smtp.url, INQUIRY_TO: STUDIO, PUBLIC_URL: base, SPAM_FILTER: 'on' },
  });
  launch = await launchChromium();
}, 60_000);

afterAll(async () => {
  await launch.browser?.close();
  await t?.close();
  await smtp?.stop();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function submit(overrides: Record<string, unknown> = {}, inquiry = validInquiry(overrides)): Promise<string> {
  const answer = await fetch(`${base}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(inquiry),
  });
  expect(answer.status).toBe(200);
  return referenceOf(await answer.text());
}

/** A mail received after the first `skip`, whose text matches. */
async function mailMatching(pattern: RegExp, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mail = smtp.received.find((received) => pattern.test(received.parsed.text ?? ''));
    if (mail) return mail;
    if (Date.now() > deadline) throw new Error(`no mail matching ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await launched(launch).newContext({ viewport, locale: 'en-GB', acceptDownloads: true });
  context.setDefaultTimeout(10_000);
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  return page;
}

/** Waits for the element to hold the text (playwright-core has no expect of its own). */
async function waitForText(page: Page, selector: string, text: string, timeout = 10_000) {
  await page.locator(selector).filter({ hasText: text }).first().waitFor({ timeout });
}

async function expectAccessible(page: Page, name: string) {
  expect(await axeViolations(page), name).toEqual([]);
}

/** Signs in as the studio through the form and the mailed link, from `path`; the page is left where the link leads. */
async function signIn(page: Page, path = '/inbox', landing = 'Inquiries'): Promise<void> {
  const before = smtp.received.length;
  await page.goto(`${base}${path}`);
  await page.getByLabel('Email address').fill(STUDIO);
  await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
  await smtp.waitFor(before + 1);
  const mail = smtp.received
    .slice(before)
    .find((received) => received.envelope.to.includes(STUDIO) && /sign in/i.test(received.parsed.subject ?? ''));
  const link = /https?:\/\/\S+\/inbox\/sign-in\?token=[A-Za-z0-9_-]{43}\S*/.exec(mail?.parsed.text ?? '')?.[0];
  expect(link).toBeDefined();
  await page.goto(link as string);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: landing }).waitFor();
}

describe('the inbox in Chromium', () => {
  it('signs in with the link mailed through the real SMTP server; every page passes axe', async () => {
    const ada = await submit();
    const page = await newPage();
    await page.goto(`${base}/inbox`);
    await expectAccessible(page, 'sign-in');
    await signIn(page);
    await waitForText(page, 'tbody#rows', 'Ada Lovelace');
    await expectAccessible(page, 'list');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'inbox-session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/inbox' });
    await page.goto(`${base}/inbox/inquiries/${ada}`);
    await expectAccessible(page, 'inquiry');
    await page.goto(`${base}/inbox/inquiries/${ada}/erase`);
    await expectAccessible(page, 'erase');
    await page.goto(`${base}/inbox/overview`);
    await expectAccessible(page, 'overview');
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-overview.png'), fullPage: true });
  });

  it('is used with the keyboard alone: search, open an inquiry, with a visible focus', async () => {
    await submit({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.example', company: 'Navy' });
    const page = await newPage();
    await signIn(page);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.getByLabel('Search names, addresses, companies and messages').focus();
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).toBe('solid');
    await page.keyboard.type('hopper');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=hopper/);
    expect(await page.locator('tbody#rows tr').count()).toBe(1);
    await page.getByRole('link', { name: 'Grace Hopper' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /Grace Hopper/ }).waitFor();
    expect(await page.getByRole('link', { name: 'Reply by mail' }).getAttribute('href')).toMatch(
      /^mailto:grace@navy\.example\?subject=Re%3A%20your%20inquiry%20INQ-/,
    );
  });

  it('releases a quarantined inquiry, whose mail then reaches the studio (signing in from its link)', async () => {
    const pitch = await submit({}, SEO_PITCH);
    const page = await newPage();
    await signIn(page, `/inbox/inquiries/${pitch}`, 'Mark Stone');
    await waitForText(page, '.facts', 'Spam (score');
    await page.getByRole('button', { name: 'Not spam: release and deliver' }).click();
    await waitForText(page, '[role=status]', 'Released from spam');
    const mail = await mailMatching(new RegExp(pitch));
    expect(mail.envelope.to).toEqual([STUDIO]);
  });

  it('shows a new inquiry within 5 seconds without a reload, announced politely', async () => {
    const page = await newPage();
    await signIn(page);
    expect(await page.locator('#live-status').getAttribute('aria-live')).toBe('polite');
    const started = Date.now();
    const reference = await submit({ firstName: 'Katherine', lastName: 'Johnson', email: 'kj@nasa.example' });
    await page.locator(`tr[data-cursor$="${reference}"]`).waitFor({ timeout: 5_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitForText(page, '#live-status', '1 new inquiry');
    expect(await page.locator('tbody#rows tr').first().textContent()).toContain('Katherine Johnson');
  });

  it('exports the list as CSV and erases a person after the confirmation', async () => {
    const reference = await submit({ firstName: 'Erin', lastName: 'Erased', email: 'erin@example.org' });
    const page = await newPage();
    await signIn(page);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'CSV' }).click();
    const csv = await (await download).path().then((path) => import('node:fs').then((fs) => fs.readFileSync(path, 'utf8')));
    expect(csv.split('\r\n')[0]).toContain('reference,receivedAt');
    expect(csv).toContain(reference);
    await page.goto(`${base}/inbox/inquiries/${reference}`);
    await page.getByRole('link', { name: 'Erase this person…' }).click();
    await page.getByRole('button', { name: 'Erase' }).click();
    expect(await page.evaluate('document.querySelector("#confirm").validity.valid')).toBe(false); // not confirmed: not sent
    await page.getByLabel('Yes, erase everything held about this address').check();
    await page.getByRole('button', { name: 'Erase' }).click();
    await waitForText(page, 'main', 'Everything held about erin@example.org is erased: 1 inquiry');
    expect(await t.services.store.inquiries.findByReference(reference)).toBeUndefined();
  });

  it('signs out, and an expired session is asked to sign in again', async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByRole('button', { name: /Sign out/ }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await page.goto(`${base}/inbox/overview`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await signIn(page);
    const database = new SQLite(join(t.dir, 'studio.db'));
    try {
      database.prepare('update inbox_sessions set seen_at = seen_at - ?').run(13 * 3_600_000); // idle for 13 hours
    } finally {
      database.close();
    }
    const answer = await page.goto(`${base}/inbox/overview`);
    expect(answer?.status()).toBe(401);
    await waitForText(page, 'main', 'Your session has ended');
  });

  it('refuses a change posted from another site, or without the CSRF token', async () => {
    const reference = await submit({
      firstName: 'Carol',
      lastName: 'Csrf',
      email: 'carol@example.org',
      message: 'Nobody has opened this one.',
    });
    const page = await newPage();
    await signIn(page);
    // A page of another site that posts a form to the inbox as soon as it loads.
    await page.route('http://attacker.example/**', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<form id="f" method="post" action="${base}/inbox/inquiries/${reference}/state"><input name="state" value="archived"></form><script>document.getElementById('f').submit()</script>`,
      }),
    );
    const refused = page.waitForResponse((response) => response.url().endsWith('/state'));
    await page.goto('http://attacker.example/');
    expect((await refused).status()).toBe(403);
    await page.goto(`${base}/inbox`);
    const tokenless = await page.evaluate<number>(
      `fetch('/inbox/inquiries/${reference}/state', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'state=archived' }).then((r) => r.status)`,
    );
    expect(tokenless).toBe(403);
    expect((await t.services.inbox?.service.find(reference))?.status).toBe('new');
  });

  it('is usable 375 px wide: nothing wider than the screen', async () => {
    const reference = await submit({ firstName: 'Narrow', lastName: 'Screen', message: `${'A long message without breaks '.repeat(10)}` });
    const page = await newPage(MOBILE);
    await signIn(page);
    for (const path of ['', `/inquiries/${reference}`, '/overview']) {
      await page.goto(`${base}/inbox${path}`);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(MOBILE.width);
      await expectAccessible(page, `${path} at 375 px`);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-mobile.png'), fullPage: true });
  });
});

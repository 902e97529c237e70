// The contact page in Debian's chromium (installed by .ci/run) driven by playwright-core, a fresh context
// per test, against the real app whose PUBLIC_URL is the origin it serves, delivering to a real SMTP
// server. A browser that cannot start fails every test (none skipped); screenshots go to test-artifacts/.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { REFERENCE_IN_TEXT, referenceOf, reserveBaseUrl, startTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, launched } from '../helpers/browser.js';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const DESKTOP = { width: 1280, height: 900 };
const MOBILE = { width: 375, height: 812 };
/** One column, tall enough to show the services below the form. */
const TALL = { width: 900, height: 2000 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let launch: Awaited<ReturnType<typeof launchChromium>> = {};
let testApp: TestApp;
let smtp: TestSmtpServer;
let base: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  smtp = await startSmtpServer();
  // Find a free port first, then serve on it with PUBLIC_URL = the origin the browser loads.
  // PUBLIC_URL must be the address clients use (CORS, issuer, resource): reserve it first.
  const reserved = await reserveBaseUrl();
  const port = reserved.port;
  base = reserved.base;
  testApp = await startTestApp({
    listen: true,
    port,
    env: { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com', PUBLIC_URL: base },
  });
  // A launch failure is kept and fails every test (a failing hook would only mark them skipped).
  launch = await launchChromium();
}, 60_000);

afterAll(async () => {
  await launch.browser?.close();
  await testApp?.close();
  await smtp?.stop();
});

interface Session {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every request the page made, in order. */
  readonly requests: { url: string; method: string; headers: Record<string, string> }[];
  readonly consoleErrors: string[];
  readonly pageErrors: string[];
}

interface PageOptions {
  readonly javaScriptEnabled?: boolean;
  /** 'active' emulates Windows High Contrast: chromium then forces the system colours, as Windows does. */
  readonly forcedColors?: 'active' | 'none';
  /** Runs on the new page before it loads the contact page (routes, a fake clock). */
  readonly before?: (page: Page) => Promise<unknown>;
}

const sessions: Session[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.context.close();
});

/** A fresh context and page on the contact page, recording requests, console errors, page errors and CSP violations. */
async function openPage(
  viewport = DESKTOP,
  { javaScriptEnabled = true, forcedColors = 'none', before }: PageOptions = {},
): Promise<Session> {
  const context = await launched(launch).newContext({ viewport, locale: 'en-GB', javaScriptEnabled, forcedColors });
  context.setDefaultTimeout(10_000);
  // CSP violations also reach the console, but the event names the directive and the blocked URL.
  await context.addInitScript(`
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__cspViolations.push(event.violatedDirective + ' ' + event.blockedURI);
    });
  `);
  const page = await context.newPage();
  const session: Session = { context, page, requests: [], consoleErrors: [], pageErrors: [] };
  sessions.push(session);
  page.on('request', (request) => session.requests.push({ url: request.url(), method: request.method(), headers: request.headers() }));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') session.consoleErrors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => session.pageErrors.push(error.message));
  await before?.(page);
  const response = await page.goto(`${base}/`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  return session;
}

const cspViolations = (page: Page) => page.evaluate<string[]>('window.__cspViolations');
const activeElement = (page: Page) =>
  page.evaluate<{ id: string; tag: string; text: string }>(
    '({ id: document.activeElement.id, tag: document.activeElement.tagName, text: document.activeElement.textContent.trim() })',
  );
/** The computed top border of the element the selector finds. */
const borderOf = (page: Page, selector: string) =>
  page.evaluate<{ width: number; style: string; color: string }>(
    `(() => { const s = getComputedStyle(document.querySelector('${selector}')); return { width: parseFloat(s.borderTopWidth), style: s.borderTopStyle, color: s.borderTopColor }; })()`,
  );
const contactPosts = (session: Session) => session.requests.filter((r) => r.method === 'POST' && r.url === `${base}/api/contact`);
const countInquiries = async () => (await testApp.services.store.inquiries.list({ limit: 10_000 })).length;

/** Holds every answer of POST /api/contact back until the returned function is called. */
async function holdAnswers(page: Page): Promise<() => void> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route(`${base}/api/contact`, async (route) => {
    await held;
    await route.continue();
  });
  return () => release();
}

async function fillForm(page: Page, values: { firstName: string; lastName: string; email: string; company?: string; message: string }) {
  await page.getByLabel('First name').fill(values.firstName);
  await page.getByLabel('Last name').fill(values.lastName);
  await page.getByLabel('Email').fill(values.email);
  if (values.company !== undefined) await page.getByLabel('Company (optional)').fill(values.company);
  await page.getByLabel('Message').fill(values.message);
}

/** Waits for the status region to show the confirmation and returns its text. */
async function confirmation(page: Page): Promise<string> {
  const status = page.locator('#form-status.status--success');
  await status.waitFor({ state: 'visible', timeout: 10_000 });
  return (await status.textContent()) ?? '';
}

async function mailWithReference(reference: string): Promise<ReceivedMail> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mail = smtp.received.find((m) => m.parsed.headers.get('x-inquiry-reference') === reference);
    if (mail) return mail;
    if (Date.now() > deadline) throw new Error(`no mail with reference ${reference} (received ${smtp.received.length})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the contact page', () => {
  it("runs in Debian's chromium", () => {
    expect(launch.error).toBeUndefined();
    expect(launched(launch).version()).toMatch(/^\d+\./);
  });

  it('shows the studio: name, description and every service from the profile, in ordered headings', async () => {
    const { page } = await openPage();
    const profile = testApp.profile;
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.title()).toContain(profile.name);
    expect(await page.getByRole('heading', { level: 1 }).allTextContents()).toEqual([profile.name]);
    expect(await page.getByText(profile.description).count()).toBeGreaterThan(0);
    const services = page.getByRole('region', { name: 'Services' }).getByRole('listitem');
    expect(await services.count()).toBe(profile.services.length);
    for (const [index, service] of profile.services.entries()) {
      expect(await services.nth(index).getByRole('heading', { level: 3 }).textContent()).toBe(service.name);
      expect(await services.nth(index).textContent()).toContain(service.description);
    }
    // Headings never skip a level (h1 → h2 → h3).
    const levels = await page.evaluate<number[]>(
      "[...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((h) => Number(h.tagName[1]))",
    );
    expect(levels[0]).toBe(1);
    for (let i = 1; i < levels.length; i++) expect((levels[i] ?? 0) - (levels[i - 1] ?? 0)).toBeLessThanOrEqual(1);
    // Every control has a real label.
    for (const label of ['First name', 'Last name', 'Email', 'Company (optional)', 'Message']) {
      expect(await page.getByLabel(label, { exact: true }).count(), label).toBe(1);
    }
  });

  it('sends the form: the confirmation with a reference appears and the mail with that reference reaches the studio', async () => {
    const session = await openPage();
    const { page } = session;
    const before = await countInquiries();
    await fillForm(page, {
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@example.com',
      company: 'Compilers Inc.',
      message: 'A new website for our compiler, please.\nLaunching in May.',
    });
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    const text = await confirmation(page);
    expect(text).toContain(testApp.profile.name);
    expect(text).toMatch(REFERENCE_IN_TEXT);
    const reference = referenceOf(text);
    expect(await page.getByRole('status').getAttribute('aria-live')).toBe('polite');

    const [post] = contactPosts(session);
    expect(contactPosts(session)).toHaveLength(1);
    expect(post?.headers['content-type']).toBe('application/json');
    expect(post?.headers['idempotency-key']).toMatch(UUID);

    const mail = await mailWithReference(reference);
    expect(mail.envelope.to).toEqual(['studio@example.com']);
    expect(mail.parsed.subject).toContain(reference);
    expect(mail.parsed.replyTo?.text).toContain('grace@example.com');
    expect(mail.parsed.text).toContain('Launching in May.');

    expect(await countInquiries()).toBe(before + 1);
    const stored = (await testApp.services.store.inquiries.list({ limit: 10 })).find((inquiry) => inquiry.reference === reference);
    expect(stored).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', company: 'Compilers Inc.' });
    // The form is ready for another inquiry and the button is usable again.
    expect(await page.getByLabel('Email').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'Send inquiry' }).isEnabled()).toBe(true);
    expect(await page.locator('form').getAttribute('aria-busy')).toBe('false');
    await page.screenshot({ path: `${ARTIFACTS}contact-confirmation.png`, fullPage: true });
  });

  it('shows the server’s error on an invalid email inline, on the field, and stores nothing', async () => {
    const session = await openPage();
    const { page } = session;
    const before = await countInquiries();
    await fillForm(page, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada.example.com', message: 'Hello.' });
    const answer = page.waitForResponse((response) => response.url() === `${base}/api/contact`);
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect((await answer).status()).toBe(400); // the server judged it: the page does not check formats itself

    const email = page.getByLabel('Email');
    const error = page.locator('#email-error');
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toBe('Email must be a valid email address, such as name@example.com.');
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect((await email.getAttribute('aria-describedby'))?.split(' ')).toContain('email-error');
    expect((await activeElement(page)).id).toBe('email'); // focus is on the field to correct
    for (const other of ['firstName', 'lastName', 'company', 'message']) {
      expect(await page.locator(`#${other}`).getAttribute('aria-invalid'), other).toBeNull();
    }
    expect(await page.getByRole('status').textContent()).toBe('Please correct the highlighted field.');
    expect(await countInquiries()).toBe(before);
    await page.screenshot({ path: `${ARTIFACTS}contact-validation-error.png`, fullPage: true });

    // Correcting the field clears its error; sending again succeeds.
    await email.fill('ada@example.com');
    expect(await email.getAttribute('aria-invalid')).toBeNull();
    expect(await error.isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect(await confirmation(page)).toMatch(REFERENCE_IN_TEXT);
    expect(await countInquiries()).toBe(before + 1);
  });

  it('flags empty required fields without sending anything', async () => {
    const session = await openPage();
    const { page } = session;
    await page.getByLabel('Email').fill('   ');
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    for (const [id, label] of [
      ['firstName', 'First name'],
      ['lastName', 'Last name'],
      ['email', 'Email'],
      ['message', 'Message'],
    ] as const) {
      expect(await page.locator(`#${id}`).getAttribute('aria-invalid'), id).toBe('true');
      expect(await page.locator(`#${id}-error`).textContent()).toBe(`${label} is required.`);
    }
    expect(await page.locator('#company').getAttribute('aria-invalid')).toBeNull();
    // A flagged field keeps its error border under the pointer (firstName, focused, has the focus colour).
    const borderOf = (id: string) => page.evaluate<string>(`getComputedStyle(document.getElementById('${id}')).borderColor`);
    const flagged = await borderOf('email');
    await page.locator('#lastName').hover();
    expect(await borderOf('lastName')).toBe(flagged);
    await page.locator('#company').hover();
    expect(await borderOf('company')).not.toBe(flagged);
    // The message gains the error first (read before its hint and count) and keeps them.
    expect(await page.locator('#message').getAttribute('aria-describedby')).toBe('message-error message-hint message-count');
    expect((await activeElement(page)).id).toBe('firstName');
    expect(contactPosts(session)).toHaveLength(0);
  });

  it('can be used with the keyboard alone, in a logical order with a visible focus', async () => {
    const { page } = await openPage();
    const before = await countInquiries();
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toMatchObject({ tag: 'A', text: 'Skip to contact' });
    await page.keyboard.press('Enter');
    const entries: [string, string][] = [
      ['firstName', 'Alan'],
      ['lastName', 'Turing'],
      ['email', 'alan@example.com'],
      ['company', ''],
      ['message', 'A site for our bombe.'],
    ];
    for (const [id, value] of entries) {
      await page.keyboard.press('Tab');
      expect((await activeElement(page)).id).toBe(id);
      const outline = await page.evaluate<string>(
        '(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()',
      );
      expect(outline, `focus style of ${id}`).toBe('solid 3px');
      if (value) await page.keyboard.type(value);
    }
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Send inquiry' });
    await page.keyboard.press('Enter');
    const text = await confirmation(page);
    const reference = referenceOf(text);
    // Said from the live region (WCAG 4.1.3); focus stays on the button, and the region takes none.
    expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Send inquiry' });
    expect(await page.locator('#form-status').getAttribute('tabindex')).toBeNull();
    const stored = (await testApp.services.store.inquiries.list({ limit: 10 })).find((inquiry) => inquiry.reference === reference);
    expect(stored).toMatchObject({ firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com', company: null });
    expect(await countInquiries()).toBe(before + 1);
  });

  it('sends a double click once, marked busy while sending', async () => {
    const session = await openPage();
    const { page } = session;
    const before = await countInquiries();
    await fillForm(page, { firstName: 'Edsger', lastName: 'Dijkstra', email: 'edsger@example.com', message: 'Twice?' });
    // Hold the answer back so the busy state can be seen.
    const release = await holdAnswers(page);
    await page.getByRole('button', { name: 'Send inquiry' }).dblclick();
    await page.getByRole('button', { name: 'Sending…' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sending…' }).getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator('form').getAttribute('aria-busy')).toBe('true');
    await page.getByLabel('Email').press('Enter'); // and Enter in a field while sending
    release();
    await confirmation(page);
    expect(contactPosts(session)).toHaveLength(1);
    expect(await countInquiries()).toBe(before + 1);
  });

  it('keeps what was typed while the inquiry was sending: it was not sent, and the form is not emptied of it', async () => {
    const session = await openPage();
    const { page } = session;
    await fillForm(page, { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', message: 'The first brief.' });
    const release = await holdAnswers(page);
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    await page.getByRole('button', { name: 'Sending…' }).waitFor();
    await page.getByLabel('Message').fill('A second thought, typed while the first was sending.');
    release();
    expect(await confirmation(page)).toMatch(/INQ-/);
    expect(await page.getByLabel('Message').inputValue()).toBe('A second thought, typed while the first was sending.');
    expect(await page.getByLabel('First name').inputValue()).toBe('Grace');
    // Sent again, it is a new inquiry (a new body, so a new Idempotency-Key), not the confirmation again.
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    await vi.waitUntil(() => contactPosts(session).length === 2, { timeout: 10_000, interval: 50 });
    const [first, second] = contactPosts(session);
    expect(second?.headers['idempotency-key']).not.toBe(first?.headers['idempotency-key']);
  });

  it('keeps the confirmation and its reference when the emptied form is sent again, and sends a new inquiry once typed', async () => {
    const session = await openPage();
    const { page } = session;
    const before = await countInquiries();
    await fillForm(page, { firstName: 'Frances', lastName: 'Allen', email: 'frances@example.com', message: 'Once, please.' });
    const send = page.getByRole('button', { name: 'Send inquiry' });
    await send.click();
    // The answer has arrived and the form is empty again: a slow second click lands now.
    const shown = await confirmation(page);
    const reference = referenceOf(shown);
    const status = page.locator('#form-status');
    await send.click();
    // The live region changes by an invisible no-break space, so the confirmation is said again.
    expect(await status.textContent()).toBe(`${shown}\u00a0`);
    await page.getByLabel('Email').press('Enter'); // and Enter in an emptied field

    expect(await status.getAttribute('class')).toBe('status status--success');
    expect(await status.textContent()).toContain(reference);
    expect(await status.isVisible()).toBe(true);
    expect(await page.locator('[aria-invalid]').count()).toBe(0);
    expect(await page.locator('.field__error:not([hidden])').count()).toBe(0);
    expect(contactPosts(session)).toHaveLength(1);
    expect(await countInquiries()).toBe(before + 1);

    // Typing starts a new inquiry: it is checked and sent as usual.
    await page.getByLabel('Message').fill('And a second project.');
    await send.click();
    expect((await activeElement(page)).id).toBe('firstName'); // the required-field check runs again
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(3);
    await fillForm(page, { firstName: 'Frances', lastName: 'Allen', email: 'frances@example.com', message: 'And a second project.' });
    await send.click();
    const next = page.locator('#form-status.status--success', { hasNotText: reference });
    await next.waitFor();
    expect(referenceOf((await next.textContent()) ?? '')).not.toBe(reference);
    expect(contactPosts(session)).toHaveLength(2);
    expect(await countInquiries()).toBe(before + 2);
  });

  it('without JavaScript, offers no form to send and names the studio’s email address', async () => {
    const session = await openPage(DESKTOP, { javaScriptEnabled: false });
    const { page } = session;

    // The page still reads well: the studio, its services, and how to reach it.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(testApp.profile.name);
    expect(await page.getByRole('region', { name: 'Services' }).getByRole('listitem').count()).toBe(testApp.profile.services.length);
    const notice = page.locator('#inquiry .notice');
    expect(await notice.isVisible()).toBe(true);
    expect(await notice.textContent()).toMatch(/^Email us at /);
    const mailto = notice.getByRole('link', { name: testApp.profile.email });
    expect(await mailto.isVisible()).toBe(true);
    expect(await mailto.getAttribute('href')).toBe(`mailto:${testApp.profile.email}`);

    // No form to fill in or send: nothing would answer it but the JSON API.
    expect(await page.locator('#inquiry-form').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Send inquiry' }).count()).toBe(0);
    for (const label of ['First name', 'Last name', 'Email', 'Company (optional)', 'Message']) {
      expect(await page.getByLabel(label, { exact: true }).isVisible(), label).toBe(false);
    }
    // Tabbing through the whole page reaches no form control.
    const reached = new Set<string>();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate<string>('document.activeElement.tagName'));
    }
    expect([...reached].filter((tag) => ['INPUT', 'TEXTAREA', 'BUTTON'].includes(tag))).toEqual([]);
    expect(session.requests.filter((request) => request.method !== 'GET')).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}contact-page-no-javascript.png`, fullPage: true });
  });

  it('says when to retry after a 429, explains a server error, and retries the same inquiry under the same Idempotency-Key', async () => {
    const session = await openPage();
    const { page } = session;
    const answers: { status: number; headers: Record<string, string>; body: Record<string, unknown> }[] = [
      {
        status: 429,
        headers: { 'retry-after': '120' },
        body: { type: 'about:blank', title: 'Too Many Requests', status: 429, error: 'rate_limited', detail: 'Too many inquiries.' },
      },
      {
        status: 500,
        headers: {},
        body: {
          type: 'about:blank',
          title: 'Internal Server Error',
          status: 500,
          error: 'internal_error',
          detail: 'Something went wrong.',
        },
      },
    ];
    await page.route(`${base}/api/contact`, async (route) => {
      const answer = answers.shift();
      if (!answer) return route.continue();
      return route.fulfill({
        status: answer.status,
        headers: answer.headers,
        contentType: 'application/problem+json',
        body: JSON.stringify(answer.body),
      });
    });
    await fillForm(page, { firstName: 'Barbara', lastName: 'Liskov', email: 'barbara@example.com', message: 'Substitutable.' });
    const status = page.getByRole('status');
    const send = page.getByRole('button', { name: 'Send inquiry' });

    await send.click();
    await page.locator('#form-status.status--error').waitFor();
    // Plainly not sent, and the other way to reach the studio, as every error says.
    expect(await status.textContent()).toBe(
      `Your inquiry was not sent: too many inquiries have come from your connection. Please try again in 2 minutes, or email us at ${testApp.profile.email}.`,
    );

    await send.click();
    await page.getByText('Something went wrong on our side').waitFor();
    expect(await status.textContent()).toContain(testApp.profile.email);

    await send.click();
    const reference = referenceOf(await confirmation(page));
    const keys = contactPosts(session).map((post) => post.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1); // the same inquiry, retried: one key
    expect(keys[0]).toMatch(UUID);

    // A new inquiry after the confirmation gets a new key.
    await fillForm(page, { firstName: 'Barbara', lastName: 'Liskov', email: 'barbara@example.com', message: 'Another one.' });
    await send.click();
    await page.locator('#form-status', { hasText: 'INQ-', hasNotText: reference }).waitFor();
    const last = contactPosts(session).at(-1)?.headers['idempotency-key'];
    expect(last).toMatch(UUID);
    expect(last).not.toBe(keys[0]);
  });

  it('asks nothing of any other host, logs no error and violates no CSP rule, on desktop and mobile', async () => {
    const session = await openPage();
    const { page } = session;
    await page.waitForLoadState('networkidle');
    // The stylesheet and the script are in effect (both would be blocked if inline).
    expect(await page.evaluate<string>('getComputedStyle(document.body).backgroundColor')).toBe('rgb(246, 245, 241)');
    await page.screenshot({ path: `${ARTIFACTS}contact-page.png`, fullPage: true });

    await fillForm(page, { firstName: 'Margaret', lastName: 'Hamilton', email: 'margaret@example.com', message: 'Apollo.' });
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect(await confirmation(page)).toMatch(REFERENCE_IN_TEXT);

    const paths = session.requests.map((r) => new URL(r.url).pathname);
    expect(paths).toEqual(expect.arrayContaining(['/', '/assets/base.css', '/assets/site.css', '/assets/site.js', '/api/contact']));
    expect(session.requests.filter((r) => new URL(r.url).origin !== base).map((r) => r.url)).toEqual([]);
    expect(session.consoleErrors).toEqual([]);
    expect(session.pageErrors).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);

    const mobile = await openPage(MOBILE);
    await mobile.page.waitForLoadState('networkidle');
    // Nothing wider than a phone's screen.
    expect(await mobile.page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await mobile.page.screenshot({ path: `${ARTIFACTS}contact-page-mobile.png`, fullPage: true });
    expect(mobile.requests.filter((r) => new URL(r.url).origin !== base)).toEqual([]);
    expect(mobile.consoleErrors).toEqual([]);
    expect(mobile.pageErrors).toEqual([]);
    expect(await cspViolations(mobile.page)).toEqual([]);
  });

  it('states the message’s limit, counts it in characters as the API does, and refuses a longer one without cutting it', async () => {
    const session = await openPage();
    const { page } = session;
    const message = page.getByLabel('Message');
    const count = page.locator('#message-count');
    const spoken = page.locator('#message-count-live');
    expect((await message.getAttribute('aria-describedby'))?.split(' ')).toContain('message-count');
    expect(await count.textContent()).toBe('0 / 10,000 characters');

    // A short brief: counted, and nothing said aloud (only near the limit, or it would talk over the typing).
    await message.fill('A short brief.');
    expect(await count.textContent()).toBe('14 / 10,000 characters');
    await page.waitForTimeout(1_500);
    expect(await spoken.textContent()).toBe('');

    // A pasted brief over the limit is kept whole, its end included, and the count says by how much.
    const long = `${'Project brief. '.repeat(800)}THE END`;
    await fillForm(page, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', message: long });
    expect(await message.inputValue()).toBe(long);
    expect(await count.textContent()).toBe('12,007 / 10,000 characters: 2,007 too many');
    await page.locator('#message-count-live', { hasText: '2,007 characters too many.' }).waitFor({ state: 'attached' });

    // Sending it is refused here, with the limit named on the field: nothing is sent, nothing confirmed.
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect(await page.locator('#message-error').textContent()).toBe('Message must be at most 10,000 characters long (it has 12,007).');
    expect(await message.getAttribute('aria-invalid')).toBe('true');
    expect((await activeElement(page)).id).toBe('message');
    expect(await page.getByRole('status').textContent()).toBe('Please correct the highlighted field.');
    expect(contactPosts(session)).toHaveLength(0);

    // Still too long while being shortened: the error follows; within the limit, it goes.
    await message.fill('x'.repeat(10_001));
    expect(await page.locator('#message-error').textContent()).toBe('Message must be at most 10,000 characters long (it has 10,001).');
    await message.fill('x'.repeat(9_990));
    expect(await message.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByRole('status').textContent()).toBe('');
    await page.locator('#message-count-live', { hasText: '10 characters left.' }).waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    const reference = referenceOf(await confirmation(page));
    const stored = (await testApp.services.store.inquiries.list({ limit: 10 })).find((inquiry) => inquiry.reference === reference);
    expect(stored?.message).toBe('x'.repeat(9_990));
  });

  it('takes a brief of 6,000 emoji whole: one character each, as the API counts them, not two', async () => {
    const { page } = await openPage();
    const brief = '🎨'.repeat(6_000); // 12,000 UTF-16 units
    await fillForm(page, { firstName: 'Emoji', lastName: 'Painter', email: 'emoji@example.com', message: brief });
    expect(await page.getByLabel('Message').inputValue()).toBe(brief);
    expect(await page.locator('#message-count').textContent()).toBe('6,000 / 10,000 characters');
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    const reference = referenceOf(await confirmation(page));
    const stored = (await testApp.services.store.inquiries.list({ limit: 10 })).find((inquiry) => inquiry.reference === reference);
    expect(stored?.message).toBe(brief);
  });

  it('shows the studio’s email address instead of the form while the script is missing, and only the form once it runs', async () => {
    for (const failure of ['blocked', 'not found', 'server error'] as const) {
      const session = await openPage(DESKTOP, {
        before: (page) =>
          page.route(`${base}/assets/site.js*`, (route) =>
            failure === 'blocked'
              ? route.abort('blockedbyclient')
              : route.fulfill({ status: failure === 'not found' ? 404 : 500, body: '' }),
          ),
      });
      const { page } = session;
      const notice = page.locator('#inquiry-fallback');
      expect(await notice.isVisible(), failure).toBe(true);
      expect(await notice.textContent(), failure).not.toContain('JavaScript');
      const mailto = notice.getByRole('link', { name: testApp.profile.email });
      expect(await mailto.getAttribute('href')).toBe(`mailto:${testApp.profile.email}`);
      expect(await page.locator('#inquiry-form').isVisible(), failure).toBe(false);
    }

    const { page } = await openPage();
    expect(await page.locator('#inquiry-form').isVisible()).toBe(true);
    expect(await page.locator('#inquiry-fallback').isVisible()).toBe(false);
  });

  it('brings the studio’s email address back, and keeps the form hidden, when the script fails while it runs', async () => {
    // A page whose form has lost its Send button: the script loads, marks the page, then throws.
    const session = await openPage(DESKTOP, {
      before: (page) =>
        page.route(`${base}/`, async (route) => {
          const response = await route.fetch();
          const html = (await response.text()).replace(/<button type="submit"[\s\S]*?<\/button>/, '');
          await route.fulfill({ response, body: html });
        }),
    });
    const { page } = session;
    expect(session.pageErrors).toHaveLength(1);
    expect(await page.locator('#inquiry-fallback').isVisible()).toBe(true);
    expect(await page.locator('#inquiry-fallback').getByRole('link', { name: testApp.profile.email }).isVisible()).toBe(true);
    expect(await page.locator('#inquiry-form').isVisible()).toBe(false);
    expect(await page.evaluate<string>(`getComputedStyle(document.getElementById('inquiry-form')).display`)).toBe('none');
  });

  it('lays the form out before the first paint: nothing moves while a slow script arrives (no layout shift)', async () => {
    for (const viewport of [MOBILE, TALL]) {
      const { page } = await openPage(viewport, {
        before: async (page) => {
          await page.addInitScript(`
            window.__layoutShiftObserved = PerformanceObserver.supportedEntryTypes.includes('layout-shift');
            window.__layoutShift = 0;
            new PerformanceObserver((list) => {
              for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__layoutShift += entry.value;
            }).observe({ type: 'layout-shift', buffered: true });
          `);
          await page.route(`${base}/assets/site.js*`, async (route) => {
            await new Promise((resolve) => setTimeout(resolve, 400));
            await route.continue();
          });
        },
      });
      expect(await page.evaluate<boolean>('window.__layoutShiftObserved')).toBe(true);
      // Two frames after the form is usable (visible), every shift there was has been reported.
      await page.locator('#inquiry-form').waitFor();
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
      expect(await page.evaluate<number>('window.__layoutShift'), `${viewport.width}×${viewport.height}`).toBe(0);
      expect(await page.locator('#inquiry-fallback').isVisible()).toBe(false);
    }
  });

  it('says when a resend was folded into the inquiry it repeats, also when that answer was lost and the retry replayed; confirms a replay of a new inquiry as usual', async () => {
    const session = await openPage();
    const { page } = session;
    const send = page.getByRole('button', { name: 'Send inquiry' });
    const status = page.getByRole('status');
    const inquiry = { lastName: 'Tpyo', email: 'jhon@example.com', company: 'Acme', message: 'Please call me back about a redesign.' };
    await fillForm(page, { firstName: 'Jhon', ...inquiry });
    await send.click();
    const reference = referenceOf(await confirmation(page));

    // The name corrected and sent again: the server keeps only the first inquiry's fields, and
    // marks such an answer Inquiry-Outcome: duplicate.
    await fillForm(page, { firstName: 'John', ...inquiry });
    const folded = page.waitForResponse((response) => response.url() === `${base}/api/contact`);
    await send.click();
    expect((await folded).headers()['inquiry-outcome']).toBe('duplicate');
    await page.locator('#form-status.status--notice').waitFor();
    expect(await status.textContent()).toBe(
      `We already have this inquiry (reference ${reference}). To correct or add something, reply to our email, or write to us at ${testApp.profile.email}.`,
    );
    expect(await page.getByLabel('First name').inputValue()).toBe('John'); // the correction is still there to copy
    const stored = await testApp.services.store.inquiries.list({ limit: 100 });
    expect(stored.filter((row) => row.email === inquiry.email).map((row) => row.firstName)).toEqual(['Jhon']);

    // A new inquiry whose answer is lost on the way: the retry under the same key is replayed.
    let lost = false;
    await page.route(`${base}/api/contact`, async (route) => {
      if (lost) return route.continue();
      lost = true;
      await route.fetch();
      await route.abort('connectionreset');
    });
    const grace = { lastName: 'Hopper', email: 'grace.h@example.com', message: 'A second project.' };
    await fillForm(page, { firstName: 'Grace', ...grace });
    await send.click();
    await page.getByText('We could not reach our server').waitFor();
    const replayed = page.waitForResponse((response) => response.url() === `${base}/api/contact`);
    await send.click();
    expect((await replayed).headers()['idempotent-replayed']).toBe('true');
    const graceReference = referenceOf(await confirmation(page));
    const keys = contactPosts(session)
      .slice(-2)
      .map((post) => post.headers['idempotency-key']);
    expect(keys[0]).toBe(keys[1]);

    // A corrected resend folded into it, whose answer is lost: the replay says it was folded too.
    lost = false;
    await fillForm(page, { firstName: 'Grace B.', ...grace });
    await send.click();
    await page.getByText('We could not reach our server').waitFor();
    const foldedReplay = page.waitForResponse((response) => response.url() === `${base}/api/contact`);
    await send.click();
    const foldedHeaders = (await foldedReplay).headers();
    expect([foldedHeaders['idempotent-replayed'], foldedHeaders['inquiry-outcome']]).toEqual(['true', 'duplicate']);
    await page.getByText(`We already have this inquiry (reference ${graceReference}).`, { exact: false }).waitFor();
  });

  it('keeps the error summary in step as the flagged fields are corrected', async () => {
    const { page } = await openPage();
    const status = page.getByRole('status');
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect(await status.textContent()).toBe('Please correct the 4 highlighted fields.');
    await page.getByLabel('First name').fill('Ada');
    expect(await status.textContent()).toBe('Please correct the 3 highlighted fields.');
    await page.getByLabel('Last name').fill('Lovelace');
    expect(await status.textContent()).toBe('Please correct the 2 highlighted fields.');
    // Edited but still blank, a field stays flagged, as sending it would find it.
    await page.getByLabel('Email').fill('   ');
    expect(await page.locator('#email-error').textContent()).toBe('Email is required.');
    expect(await status.textContent()).toBe('Please correct the 2 highlighted fields.');
    await page.getByLabel('Email').fill('ada@example.com');
    expect(await status.textContent()).toBe('Please correct the highlighted field.');
    await page.getByLabel('Message').fill('Hello.');
    expect(await status.textContent()).toBe('');
    expect(await status.getAttribute('class')).toBe('status');
    expect(await page.locator('[aria-invalid]').count()).toBe(0);
  });

  it('keeps focus on the Send button while sending and says that it is sending', async () => {
    const session = await openPage();
    const { page } = session;
    const release = await holdAnswers(page);
    await fillForm(page, { firstName: 'Tim', lastName: 'Berners-Lee', email: 'tim@example.com', message: 'A web.' });
    await page.getByLabel('Message').press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sending…' }).waitFor();
    expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Sending…' });
    expect(await page.getByRole('status').textContent()).toBe('Sending your inquiry…');
    await page.keyboard.press('Enter'); // pressed again while sending: ignored
    release();
    await confirmation(page);
    expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Send inquiry' });
    expect(contactPosts(session)).toHaveLength(1);
  });

  it('gives up on an answer that has not come after 30 seconds, and retries under the same Idempotency-Key', async () => {
    let answer = false;
    const session = await openPage(DESKTOP, {
      before: async (page) => {
        await page.clock.install();
        // The first request is never answered; the page's retry goes through.
        await page.route(`${base}/api/contact`, (route) => (answer ? route.continue() : undefined));
      },
    });
    const { page } = session;
    await fillForm(page, { firstName: 'Vint', lastName: 'Cerf', email: 'vint@example.com', message: 'Packets.' });
    const send = page.getByRole('button', { name: 'Send inquiry' });
    await send.click();
    await page.getByRole('button', { name: 'Sending…' }).waitFor();
    await page.clock.runFor(29_000);
    expect(await page.locator('form').getAttribute('aria-busy')).toBe('true'); // still waiting
    await page.clock.runFor(1_000);
    await page.getByText('We could not reach our server').waitFor();
    expect(await page.locator('form').getAttribute('aria-busy')).toBe('false');
    expect(await page.getByLabel('Message').inputValue()).toBe('Packets.');

    answer = true;
    await send.click();
    expect(await confirmation(page)).toMatch(REFERENCE_IN_TEXT);
    const keys = contactPosts(session).map((post) => post.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it('explains other refusals in plain words, not in the server’s technical detail', async () => {
    const session = await openPage();
    const { page } = session;
    const refusals: { status: number; detail: string; says: string }[] = [
      { status: 413, detail: 'The body is larger than 65536 bytes.', says: 'it is longer than our server accepts. Please shorten it' },
      { status: 415, detail: 'Send the request body as JSON with Content-Type: application/json.', says: 'our server could not accept it' },
      { status: 422, detail: 'This Idempotency-Key was used with another body.', says: 'our server could not accept it' },
      { status: 400, detail: 'The Idempotency-Key header must be 1-255 visible ASCII characters.', says: 'our server could not accept it' },
      { status: 403, detail: 'Forbidden by policy.', says: 'our server could not accept it' },
    ];
    const answers = [...refusals];
    await page.route(`${base}/api/contact`, (route) => {
      const answer = answers.shift();
      return route.fulfill({
        status: answer?.status,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Refused', status: answer?.status, detail: answer?.detail }),
      });
    });
    await fillForm(page, { firstName: 'Radia', lastName: 'Perlman', email: 'radia@example.com', message: 'Spanning trees.' });
    for (const refusal of refusals) {
      const shown = page.locator('#form-status.status--error', { hasText: refusal.says });
      await page.getByRole('button', { name: 'Send inquiry' }).click(); // the status says "Sending…" until the answer
      await shown.waitFor();
      const text = (await shown.textContent()) ?? '';
      expect(text, String(refusal.status)).toMatch(/^Your inquiry was not sent: /);
      expect(text, String(refusal.status)).not.toContain(refusal.detail);
      expect(text, String(refusal.status)).toContain(`or email us at ${testApp.profile.email}.`);
    }
  });

  it('in forced colours (Windows High Contrast), draws the Send button’s border', async () => {
    const { page } = await openPage(DESKTOP, { forcedColors: 'active' });
    const button = await borderOf(page, 'button[type="submit"]');
    expect(button.width).toBeGreaterThanOrEqual(1);
    expect(button.style).toBe('solid');
    expect(button.color).not.toBe('rgba(0, 0, 0, 0)');
  });

  it('in forced colours (Windows High Contrast), marks invalid fields without the shadows it drops', async () => {
    const { page } = await openPage(DESKTOP, { forcedColors: 'active' });
    await page.getByLabel('Company (optional)').fill('Acme');
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect((await borderOf(page, '#email')).width).toBeGreaterThan((await borderOf(page, '#company')).width);
  });

  it('beside the form (60rem and wider), leaves the services room to read', async () => {
    for (const width of [960, 1024, 1100, 1280]) {
      const { page } = await openPage({ width, height: 900 });
      const widths = await page.evaluate<number[]>(
        "[...document.querySelectorAll('.service__description')].map((element) => element.getBoundingClientRect().width)",
      );
      expect(Math.min(...widths), `at ${width} px`).toBeGreaterThanOrEqual(240);
    }
  });

  it('on a window shorter than the form, brings each focused control into view', async () => {
    // 1920×1080 at 200 % zoom.
    const { page } = await openPage({ width: 960, height: 540 });
    await page.getByLabel('First name').focus();
    for (const id of ['firstName', 'lastName', 'email', 'company', 'message', '']) {
      const focused = await page.evaluate<{ id: string; top: number; bottom: number }>(
        '(() => { const r = document.activeElement.getBoundingClientRect(); return { id: document.activeElement.id, top: r.top, bottom: r.bottom }; })()',
      );
      expect(focused.id).toBe(id);
      expect(focused.top, id || 'the Send button').toBeGreaterThanOrEqual(0);
      expect(focused.bottom, id || 'the Send button').toBeLessThanOrEqual(540);
      await page.keyboard.press('Tab');
    }
  });
});

describe('the API reference', () => {
  it('renders every operation of /openapi.json at /docs, from this origin only', async () => {
    const session = await openPage();
    const { page } = session;
    const response = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(document.paths).reduce((count, item) => count + Object.keys(item).length, 0);
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('.opblock').count()).toBe(operations);
    await expect(page.locator('.opblock-summary-path').filter({ hasText: '/api/contact' }).count()).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}docs.png`, fullPage: false });
    expect(session.requests.filter((request) => !request.url.startsWith(base))).toEqual([]);
    expect(session.pageErrors).toEqual([]);
  });
});

// Writes the README's screenshots of the contact page, the studio's notification mail and the inbox
// (docs/images/) with the browser tests' helpers: the real app on a temporary SQLite file, a real
// SMTP server, Debian's chromium through playwright-core.
// Run: node --import tsx scripts/screenshot.ts
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { reserveBaseUrl, startTestApp, type TestApp } from '../test/helpers/app.js';
import { launchChromium, launched } from '../test/helpers/browser.js';
import { receiveNotificationMail, showMail } from '../test/helpers/notification-mail.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET } from '../test/helpers/webhook.js';

const INBOX_USER = 'studio@example.com';
const IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));

/** Each picture: its file and the browser window it is taken in (the first screen, as a visitor sees it). */
const SHOTS = [
  { file: 'contact-page.png', viewport: { width: 1280, height: 1000 } },
  { file: 'contact-page-mobile.png', viewport: { width: 375, height: 812 } },
] as const;

async function main(): Promise<void> {
  mkdirSync(IMAGES, { recursive: true });
  // PUBLIC_URL must be the origin the browser loads (the page's CSP and CORS are bound to it).
  const { port, base } = await reserveBaseUrl();
  // A webhook receiver, so that the inbox's pictures show deliveries made.
  const receiver = await startWebhookReceiver();
  const env = { PUBLIC_URL: base, INBOX_USERS: INBOX_USER, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };
  const app = await startTestApp({ listen: true, port, env });
  const launch = await launchChromium();
  try {
    const browser = launched(launch);
    for (const { file, viewport } of SHOTS) {
      const context = await browser.newContext({ viewport, locale: 'en-GB' });
      const page = await context.newPage();
      const response = await page.goto(`${base}/`, { waitUntil: 'load' });
      if (response?.status() !== 200) throw new Error(`GET / answered ${response?.status()}`);
      await page.locator('form').waitFor({ state: 'visible' });
      await page.screenshot({ path: `${IMAGES}${file}` });
      await context.close();
      process.stdout.write(`wrote docs/images/${file}\n`);
    }
    // The mail as it arrives, shown as a mail client would, in a light and a dark colour scheme.
    const mail = await receiveNotificationMail({ STUDIO_TIMEZONE: 'Europe/London' });
    for (const colorScheme of ['light', 'dark'] as const) {
      const file = `notification-mail${colorScheme === 'dark' ? '-dark' : ''}.png`;
      const context = await browser.newContext({ viewport: { width: 720, height: 760 }, colorScheme, javaScriptEnabled: false });
      const page = await context.newPage();
      await showMail(page, mail);
      await page.screenshot({ path: `${IMAGES}${file}`, fullPage: true });
      await context.close();
      process.stdout.write(`wrote docs/images/${file}\n`);
    }
    await inboxShots(app, browser);
  } finally {
    await launch.browser?.close();
    await app.close();
    await receiver.close();
  }
}

/** A few inquiries as a studio gets them. */
const SAMPLES = [
  {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@analytical.example',
    company: 'Analytical Engines Ltd',
    message: 'We need a new website for our engine before the spring fair.\nBudget around 30k.',
  },
  {
    firstName: 'Grace',
    lastName: 'Hopper',
    email: 'grace@navy.example',
    company: 'Navy Labs',
    message: 'Could you redesign our booking app? The current one fails on phones.',
  },
  {
    firstName: 'Katherine',
    lastName: 'Johnson',
    email: 'kj@orbit.example',
    company: null,
    message: 'Looking for a brand identity for a small aerospace consultancy.',
  },
  {
    firstName: 'Edsger',
    lastName: 'Dijkstra',
    email: 'ewd@shortest.example',
    company: 'Shortest Path BV',
    message: 'An accessibility audit of our route planner, in Dutch and English.',
  },
];

async function inboxShots(app: TestApp, browser: Browser): Promise<void> {
  // Stored as intake stores them, each through another door, a few minutes apart.
  const sources = ['page', 'api', 'mcp', 'page'] as const;
  await app.services.store.inquiries.insertMany(
    SAMPLES.map((sample, i) => ({
      inquiry: {
        ...sample,
        reference: `INQ-SAMP0${i}`,
        clientId: null,
        receivedAt: new Date(Date.now() - (i * 37 + 5) * 60_000),
        source: sources[i] ?? null,
      },
      fingerprint: `sample-${i}`,
    })),
  );
  const references = SAMPLES.map((_, i) => `INQ-SAMP0${i}`);
  await app.services.store.outbox.enqueue(references, ['webhook'], new Date());
  app.services.worker.wake();
  const deadline = Date.now() + 10_000;
  while ((await app.services.store.outbox.countByStatus()).pending > 0) {
    if (Date.now() > deadline) throw new Error('the sample deliveries were not made');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const link = await app.services.inbox?.access.printableLink(INBOX_USER);
  if (!link) throw new Error('no inbox link');
  const context = await browser.newContext({ viewport: { width: 1280, height: 760 }, locale: 'en-GB' });
  const page = await context.newPage();
  await page.goto(link);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Inquiries' }).waitFor();
  await page.screenshot({ path: `${IMAGES}inbox-list.png` });
  process.stdout.write('wrote docs/images/inbox-list.png\n');
  await page.getByRole('link', { name: 'Ada Lovelace' }).click();
  await page.getByRole('heading', { name: /Ada Lovelace/ }).waitFor();
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.screenshot({ path: `${IMAGES}inbox-inquiry.png` });
  process.stdout.write('wrote docs/images/inbox-inquiry.png\n');
  await context.close();
}

await main();

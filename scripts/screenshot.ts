// Writes the README's screenshots of the contact page and of the studio's notification mail
// (docs/images/) with the browser tests' helpers: the real app on a temporary SQLite file, a real
// SMTP server, Debian's chromium through playwright-core.
// Run: node --import tsx scripts/screenshot.ts
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reserveBaseUrl, startTestApp } from '../test/helpers/app.js';
import { launchChromium, launched } from '../test/helpers/browser.js';
import { receiveNotificationMail, showMail } from '../test/helpers/notification-mail.js';

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
  const app = await startTestApp({ listen: true, port, env: { PUBLIC_URL: base }, startWorker: false });
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
  } finally {
    await launch.browser?.close();
    await app.close();
  }
}

await main();

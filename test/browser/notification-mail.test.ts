// The notification mail's HTML part in Debian's chromium: what the studio sees first, its links, the
// same content in a light and a dark colour scheme with the contrasts holding, and a phone's width;
// its picture goes to test-artifacts/ (docs/images/ is refreshed by `npm run screenshot`).
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, launched } from '../helpers/browser.js';
import { receiveNotificationMail, showMail } from '../helpers/notification-mail.js';
import type { ReceivedMail } from '../helpers/smtp.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
let launch: Awaited<ReturnType<typeof launchChromium>> = {};
let mail: ReceivedMail;

beforeAll(async () => {
  mail = await receiveNotificationMail({ STUDIO_TIMEZONE: 'Europe/London' });
  launch = await launchChromium();
}, 60_000);

afterAll(async () => {
  await launch.browser?.close();
});

/** WCAG 2.x contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r = 0, g = 0, bl = 0] = (colour.match(/\d+(\.\d+)?/g) ?? []).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

async function open(browser: Browser, colorScheme: 'light' | 'dark', width = 700) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, javaScriptEnabled: false });
  const page = await context.newPage();
  await showMail(page, mail);
  return { context, page };
}

describe('the notification mail in a browser', () => {
  it('comes from the studio’s name and shows the person, company and message first, then when and where from', async () => {
    expect(mail.parsed.from?.value).toEqual([{ name: 'Northlight Studio', address: 'no-reply@studio.example' }]);
    const { context, page } = await open(launched(launch), 'light');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}notification-mail.png`, fullPage: true });
    const text = await page.locator('body').innerText();
    const order = ['Ada Lovelace', 'Analytical Engines Ltd', 'ada@example.com', 'calculating engine', 'Reply to Ada', 'Received'];
    const positions = order.map((part) => text.indexOf(part));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(text).toMatch(/Received\s+\w+day \d{1,2} \w+ \d{4} at \d\d:\d\d \(Europe\/London\)/);
    expect(text).toMatch(/Came through\s+the HTTP API/);
    const reference = mail.parsed.headers.get('x-inquiry-reference') as string;
    expect(await page.getByRole('link', { name: 'Reply to Ada' }).getAttribute('href')).toBe(
      `mailto:ada@example.com?subject=Re%3A%20your%20inquiry%20${reference}`,
    );
    expect(await page.getByRole('link', { name: 'Open in the inbox' }).getAttribute('href')).toBe(
      `https://studio.example/inbox/inquiries/${reference}`,
    );
    await context.close();
  });

  it('holds its contrasts in a light and a dark colour scheme', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page } = await open(launched(launch), scheme);
      const colours = await page.evaluate<Record<'card' | 'heading' | 'muted' | 'link' | 'button' | 'buttonText', string>>(`(() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector));
        return {
          card: style('.card').backgroundColor,
          heading: style('h1').color,
          muted: style('.muted').color,
          link: style('a.link').color,
          button: style('a.button').backgroundColor,
          buttonText: style('a.button').color,
        };
      })()`);
      expect(contrast(colours.heading, colours.card)).toBeGreaterThanOrEqual(7);
      expect(contrast(colours.muted, colours.card)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(colours.link, colours.card)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(colours.buttonText, colours.button)).toBeGreaterThanOrEqual(4.5);
      const dark = contrast(colours.card, 'rgb(0, 0, 0)') < contrast(colours.card, 'rgb(255, 255, 255)');
      expect(dark).toBe(scheme === 'dark');
      await context.close();
    }
  });

  it('fits a phone’s width without scrolling sideways', async () => {
    const { context, page } = await open(launched(launch), 'light', 375);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await context.close();
  });
});

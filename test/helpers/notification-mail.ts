// The studio's notification mail as it arrives: the real app delivering one inquiry to a real SMTP
// server. The browser test reads it; scripts/screenshot.ts pictures it for docs/images/.
import type { Page } from 'playwright-core';
import { startTestApp } from './app.js';
import { type ReceivedMail, startSmtpServer } from './smtp.js';

export const SAMPLE_INQUIRY = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: 'Analytical Engines Ltd',
  message:
    'Hello,\n\nWe are launching a calculating engine in the spring and need a website that explains it to people who have never seen one: a few pages, fast, accessible, in English and French.\n\nCould you start in January? Happy to talk this week.\n\nAda',
};

/** Delivers SAMPLE_INQUIRY (with `env` added to the app's) and returns the mail the studio receives. */
export async function receiveNotificationMail(env: Record<string, string> = {}): Promise<ReceivedMail> {
  const smtp = await startSmtpServer();
  const app = await startTestApp({
    env: { SMTP_URL: smtp.url, INQUIRY_TO: 'studio@northlight.example', PUBLIC_URL: 'https://studio.example', ...env },
  });
  try {
    const response = await app.app.inject({ method: 'POST', url: '/api/contact', payload: SAMPLE_INQUIRY });
    if (response.statusCode !== 200) throw new Error(`POST /api/contact answered ${response.statusCode}`);
    const [mail] = await smtp.waitFor(1);
    if (!mail) throw new Error('no mail');
    return mail;
  } finally {
    await app.close();
    await smtp.stop();
  }
}

/** Shows a mail's HTML part in `page` as a mail client would: no scripts, nothing fetched. */
export async function showMail(page: Page, mail: ReceivedMail): Promise<void> {
  if (typeof mail.parsed.html !== 'string') throw new Error('the mail has no HTML part');
  await page.route('**/*', (route) => route.abort());
  await page.setContent(mail.parsed.html, { waitUntil: 'load' });
}

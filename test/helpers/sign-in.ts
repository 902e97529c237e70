// A person signing in through /oauth/authorize: a loopback callback server (RFC 8252) that records
// where the browser is sent back, and the consent page driven in Chromium with the code read from
// the real SMTP server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { TestSmtpServer } from './smtp.js';

export interface Callback {
  readonly uri: string;
  /** The next URL the browser is sent back to. */
  next(): Promise<URL>;
  close(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  const waiting: ((url: URL) => void)[] = [];
  const arrived: URL[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
    // The browser also asks for /favicon.ico: only the callback counts.
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    const waiter = waiting.shift();
    if (waiter) waiter(url);
    else arrived.push(url);
    response.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in: you can close this page.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const first = arrived.shift();
      return first ? Promise.resolve(first) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The code in the newest mail to `to` received after the first `after` mails. */
export async function codeMailedTo(smtp: TestSmtpServer, to: string, after: number): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mails = smtp.received.slice(after).filter((mail) => mail.envelope.to.includes(to));
    const code = /\b(\d{6})\b/.exec(mails.at(-1)?.parsed.text ?? '')?.[1];
    if (code) return code;
    if (Date.now() > deadline) throw new Error(`no code mailed to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Opens the authorization URL, gives `email`, types the mailed code and approves (or denies), and
 * waits until the browser lands on the callback. `inspect` sees the page at each step.
 */
export async function consentInBrowser(
  browser: Browser,
  smtp: TestSmtpServer,
  authorizationUrl: string,
  {
    email,
    decision = 'approve',
    inspect,
  }: { email: string; decision?: 'approve' | 'deny'; inspect?: (page: Page, step: string) => Promise<void> },
): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl);
    await inspect?.(page, 'email');
    const mailsBefore = smtp.received.length;
    await page.getByLabel('Your email address').fill(email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    const code = await codeMailedTo(smtp, email, mailsBefore);
    await page.getByLabel('Code from the mail').waitFor();
    await inspect?.(page, 'code');
    await page.getByLabel('Code from the mail').fill(code);
    await page.getByRole('button', { name: decision === 'approve' ? 'Approve' : 'Deny' }).click();
    await page.waitForURL(/\/callback\?/);
  } finally {
    await context.close();
  }
}

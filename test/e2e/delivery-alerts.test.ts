// The delivery alerts over real sockets: a webhook failing for 15 minutes (the service's clock moved
// on) is told by one mail to the studio (real SMTP server), its recovery by one more; email failing
// is told by one signed webhook event (real receiver).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FAILING_ALERT_MS } from '../../src/delivery/health.js';
import type { ChannelHealthFacts } from '../../src/storage/ports.js';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

const INQUIRY_TO = 'studio@northlight.example';
/** Retries a few times a second, well inside a window that outlasts the hours the clock is moved on. */
const QUICK_RETRY = { baseMs: 40, capMs: 200, windowMs: 72 * 3_600_000 };

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setUp(): Promise<{ app: TestApp; smtp: TestSmtpServer; receiver: TestWebhookReceiver; later: (ms: number) => void }> {
  const smtp = await startSmtpServer();
  cleanups.push(() => smtp.stop());
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  let offset = 0;
  const app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      INQUIRY_TO,
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      STUDIO_TIMEZONE: 'Europe/London',
    },
    retry: QUICK_RETRY,
    now: () => new Date(Date.now() + offset),
  });
  cleanups.push(() => app.close());
  return { app, smtp, receiver, later: (ms) => (offset += ms) };
}

async function submit(app: TestApp): Promise<void> {
  const response = await app.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
  expect(response.statusCode).toBe(200);
}

/** Waits until the store's health of `channel` passes `test` (an attempt's outcome is recorded after it is made). */
async function storeSees(app: TestApp, channel: string, test: (health: ChannelHealthFacts | undefined) => boolean): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if (test((await app.services.store.outbox.health()).find((known) => known.channel === channel))) return;
    await sleep(20);
  }
  throw new Error(`the store never saw ${channel} so`);
}
const failing = (app: TestApp, channel: string) => storeSees(app, channel, (health) => Boolean(health?.failingSince));

const subjects = (smtp: TestSmtpServer) => smtp.received.map((mail) => mail.parsed.subject);

describe('delivery alerts', () => {
  it('mails the studio once when the webhook has failed for 15 minutes, and once when it recovers', async () => {
    const { app, smtp, receiver, later } = await setUp();
    receiver.script.push(...Array<number>(100_000).fill(503));
    await submit(app);
    await smtp.waitFor(1); // the inquiry itself, by email
    await failing(app, 'webhook');

    await app.services.alerts.check();
    later(FAILING_ALERT_MS - 60_000);
    await app.services.alerts.check();
    await sleep(300);
    expect(smtp.received).toHaveLength(1); // 14 minutes: nothing yet

    later(60_000);
    await app.services.alerts.check();
    const [, alert] = await smtp.waitFor(2);
    expect(alert?.parsed.subject).toBe('Inquiries are not reaching your webhook');
    expect(alert?.envelope.to).toEqual([INQUIRY_TO]);
    expect(alert?.parsed.text).toContain('webhook answered HTTP 503');
    expect(alert?.parsed.text).toMatch(/failed since \w+day \d+ \w+ \d{4} at \d\d:\d\d \(Europe\/London\)/);

    // Still failing, hours on, from this instance or a second look: told once.
    await app.services.alerts.check();
    later(3 * 3_600_000);
    await app.services.alerts.check();
    await sleep(300);
    expect(subjects(smtp)).toHaveLength(2);

    receiver.script.length = 0;
    await receiver.waitFor((received) => received.some((hook) => hook.status === 200));
    await storeSees(app, 'webhook', (health) => health?.failingSince === null);
    await app.services.alerts.check();
    const [, , recovered] = await smtp.waitFor(3);
    expect(recovered?.parsed.subject).toBe('Inquiries reach your webhook again');
    await app.services.alerts.check();
    await sleep(300);
    expect(subjects(smtp)).toHaveLength(3);
  });

  it('tells the webhook, by a signed event, when email has failed for 15 minutes', async () => {
    const { app, smtp, receiver, later } = await setUp();
    smtp.rejectWith = 451;
    await submit(app);
    await receiver.waitFor((received) => received.length === 1); // the inquiry itself, by webhook
    await failing(app, 'email');

    later(FAILING_ALERT_MS);
    await app.services.alerts.check();
    await receiver.waitFor((received) => received.length === 2);
    const event = receiver.received[1];
    expect(event?.headers['webhook-id']).toMatch(/^msg_/);
    expect(event?.verified).toMatchObject({
      type: 'inquiry.delivery_alert',
      data: { channel: 'email', state: 'alerting', reason: 'failing', lastError: { message: expect.stringContaining('451') } },
    });
    await app.services.alerts.check();
    await sleep(300);
    expect(receiver.received).toHaveLength(2);
  });
});

// The quarantine digest over real sockets, on each backend: the service's schedule mails what went
// to the quarantine (real SMTP server) with each release command, once, and the command delivers the
// inquiry; `digest --send` from the CLI as a real process; a webhook-only studio gets a signed event
// (real receiver); instances started together on one PostgreSQL database send one digest.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { runCli as cli } from '../helpers/cli.js';
import { BACKENDS, type FreshDatabase, freshPostgres } from '../helpers/databases.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { SEO_PITCH } from '../helpers/spam.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

const INQUIRY_TO = 'studio@northlight.example';
const pitch = (email: string) => ({ ...SEO_PITCH, email });

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function post(testApp: TestApp, body: unknown): Promise<string> {
  const response = await fetch(`${testApp.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return referenceOf(await response.text());
}

const isDigest = (mail: ReceivedMail) => mail.parsed.subject?.startsWith('Quarantine digest') === true;
const digestsIn = (smtp: TestSmtpServer) => smtp.received.filter(isDigest);
const digestEvents = (receiver: TestWebhookReceiver) =>
  receiver.received.filter((hook) => hook.body.includes('"inquiry.quarantine_digest"'));

async function stopProcess(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  await service.exited;
}

describe.each(BACKENDS)('the quarantine digest on $name', ({ fresh }) => {
  async function setUp(channels: { email: boolean; webhook: boolean }) {
    const database: FreshDatabase = await fresh();
    cleanups.push(() => database.drop());
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { port, base } = await reserveBaseUrl();
    const env: Record<string, string> = {
      PUBLIC_URL: base,
      DATABASE_URL: database.url,
      SPAM_FILTER: 'on',
      SPAM_DIGEST: 'daily',
      ...(channels.email && { SMTP_URL: smtp.url, INQUIRY_TO }),
      ...(channels.webhook && { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET }),
    };
    /** The service as src/main.ts starts it, once the test has posted what it needs: worker, then the digest's schedule. */
    const start = async (startWorker = false) => {
      const testApp = await startTestApp({ env, listen: true, port, startWorker });
      cleanups.push(() => testApp.close());
      return testApp;
    };
    const begin = async (testApp: TestApp) => {
      await testApp.services.worker.start();
      testApp.services.digests.start();
    };
    return { smtp, receiver, env, start, begin };
  }

  it('mails what went to the quarantine with each release command, once; the command delivers the inquiry', async () => {
    const { smtp, receiver, env, start, begin } = await setUp({ email: true, webhook: true });
    const testApp = await start();
    const inbox = await post(testApp, validInquiry());
    const spam = await post(testApp, SEO_PITCH);
    await begin(testApp);

    // The inbox inquiry as usual, and the digest: one mail to INQUIRY_TO, nothing on the webhook.
    await smtp.waitFor(2);
    const [digest] = digestsIn(smtp);
    expect(digest?.envelope.to).toEqual([INQUIRY_TO]);
    expect(digest?.parsed.subject).toBe('Quarantine digest: 1 inquiry held as spam');
    const text = digest?.parsed.text ?? '';
    expect(text).toContain('1 inquiry went to the quarantine since digests began.');
    expect(text).toContain('1. Mark Stone <mark@rankfast.example>, Rank Fast\n');
    expect(text).toMatch(new RegExp(`   ${spam} · received [\\d\\-T:.]+Z · score \\d`));
    expect(text).toMatch(/ {3}Reasons: .*too_many_links \(5 links in the message \(3 pass\)\).*spam_phrases/);
    expect(text).toContain(`   "${SEO_PITCH.message.slice(0, 200)}…"\n`);
    expect(text).toContain(`   Release: studio-inquiry release ${spam}\n`);
    expect(text).not.toContain(inbox);
    await receiver.waitFor((received) => received.length >= 1);
    expect(await testApp.services.metrics.registry.metrics()).toContain('studio_inquiry_quarantine_digests_total{channel="email"} 1');

    // Another look, and a restart on the same day: the day's digest is not sent again.
    await testApp.services.digests.check();
    await testApp.close();
    const restarted = await start(true);
    await restarted.services.digests.check();
    await sleep(500);
    expect(digestsIn(smtp)).toHaveLength(1);
    expect(digestEvents(receiver)).toHaveLength(0);

    // The release command, as the mail gives it, delivers the inquiry once on each channel.
    const [, command = ''] = /Release: studio-inquiry (release INQ-\w+)/.exec(text) ?? [];
    const released = await cli(command.split(' '), env);
    expect(released).toMatchObject({ code: 0, stderr: '' });
    await smtp.waitFor(3);
    await receiver.waitFor((received) => received.some((hook) => hook.body.includes(spam)));
    expect(smtp.received.filter((mail) => mail.parsed.subject?.endsWith(spam))).toHaveLength(1);
  });

  it('digest --send from the CLI queues what went to the quarantine since, for the running service to send; nothing to list, nothing sent', async () => {
    const { smtp, env, start } = await setUp({ email: true, webhook: false });
    const testApp = await start(true);
    // The schedule took the day's digest, empty, as the service started.
    await testApp.services.digests.check();

    const nothing = await cli(['digest', '--send'], env);
    expect(nothing).toEqual({ code: 0, stdout: 'Nothing went to the quarantine since the last digest: nothing queued.\n', stderr: '' });

    // One arrives as spam; one arrived in the inbox and the studio moves it to the quarantine.
    const moved = await post(
      testApp,
      validInquiry({ email: 'grace@example.com', message: 'Actually a brief about our website, moved by hand.' }),
    );
    await smtp.waitFor(1);
    expect((await cli(['spam', moved], env)).code).toBe(0);
    const spam = await post(testApp, SEO_PITCH);

    const sent = await cli(['digest', '--send'], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(
      new RegExp(`^Queued the quarantine digest by email to ${INQUIRY_TO} at [\\d\\-T:.]+Z: 2 inquiries; a running server sends it\\.\\n`),
    );
    // Listed lowest score first: the one moved by hand scored nothing.
    expect(sent.stdout.split('\n').slice(1)).toEqual([`  ${moved}`, `  ${spam}`, '']);
    await smtp.waitFor(2);
    const text = digestsIn(smtp)[0]?.parsed.text ?? '';
    expect(text).toContain('2 inquiries went to the quarantine since the last digest (');
    expect(text).toMatch(
      new RegExp(
        `   ${moved} · received [\\d\\-T:.]+Z · moved to the quarantine [\\d\\-T:.]+Z · score 0\\n   Reasons: none \\(moved by hand\\)`,
      ),
    );
    expect(text).toContain(`Release: studio-inquiry release ${moved}`);
    expect(text).toContain(`Release: studio-inquiry release ${spam}`);

    // Sent: the next asks find nothing new.
    expect((await cli(['digest', '--send'], env)).stdout).toBe('Nothing went to the quarantine since the last digest: nothing queued.\n');
    await sleep(500);
    expect(digestsIn(smtp)).toHaveLength(1);

    // Wrong usage, and a studio with no channel to send it on.
    expect(await cli(['digest'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('digest needs --send') });
    expect(await cli(['digest', '--send', 'now'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('digest takes no argument'),
    });
    const { SMTP_URL: _smtp, INQUIRY_TO: _to, ...noChannel } = env;
    expect(await cli(['digest', '--send'], noChannel)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'studio-inquiry: no delivery channel is configured (SMTP_URL and INQUIRY_TO, or WEBHOOK_URL): the digest has nowhere to go\n',
    });
  });

  it('sends a webhook-only studio a signed inquiry.quarantine_digest event that verifies', async () => {
    const { receiver, start, begin } = await setUp({ email: false, webhook: true });
    const testApp = await start();
    const spam = await post(testApp, SEO_PITCH);
    await begin(testApp);

    await receiver.waitFor(() => digestEvents(receiver).length === 1);
    const [event] = digestEvents(receiver);
    expect(event?.status).toBe(200);
    expect(event?.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
    // The receiver checked the signature with the reference library: verified is the parsed body.
    expect(event?.verified).toEqual(JSON.parse(event?.body ?? 'null'));
    expect(event?.verified).toMatchObject({
      type: 'inquiry.quarantine_digest',
      timestamp: expect.stringMatching(/Z$/),
      data: {
        since: null,
        total: 1,
        inquiries: [
          {
            reference: spam,
            firstName: 'Mark',
            lastName: 'Stone',
            email: 'mark@rankfast.example',
            company: 'Rank Fast',
            excerpt: `${SEO_PITCH.message.slice(0, 200)}…`,
            score: expect.any(Number),
            reasons: expect.arrayContaining([expect.objectContaining({ code: 'too_many_links' })]),
            release: `studio-inquiry release ${spam}`,
          },
        ],
      },
    });
    await testApp.services.digests.check();
    await sleep(300);
    expect(digestEvents(receiver)).toHaveLength(1);
    expect(await testApp.services.metrics.registry.metrics()).toContain('studio_inquiry_quarantine_digests_total{channel="webhook"} 1');
  });
});

describe('on PostgreSQL, instances started together', () => {
  it("send the day's digest once, listing every inquiry quarantined", async () => {
    const database = await freshPostgres();
    cleanups.push(() => database.drop());
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    const { port, base } = await reserveBaseUrl();
    const env = { PUBLIC_URL: base, DATABASE_URL: database.url, SMTP_URL: smtp.url, INQUIRY_TO, SPAM_FILTER: 'on' };
    const intake = await startTestApp({ env: { ...env, SPAM_DIGEST: 'off' }, listen: true, port });
    const spam = [await post(intake, pitch('a@rankfast.example')), await post(intake, pitch('b@rankfast.example'))];
    await intake.close();

    const { PUBLIC_URL: _url, ...processEnv } = env;
    const instances = await Promise.all([1, 2, 3].map(() => startService({ ...processEnv, SPAM_DIGEST: 'daily' })));
    for (const instance of instances) cleanups.push(() => stopProcess(instance));
    await smtp.waitFor(1);
    await sleep(1_000);
    expect(smtp.received).toHaveLength(1);
    const text = smtp.received[0]?.parsed.text ?? '';
    for (const reference of spam) expect(text).toContain(`Release: studio-inquiry release ${reference}`);
    // Which instance took it, it says without a name or an address.
    const logs = instances.map((instance) => instance.output()).join('');
    expect(logs.match(/quarantine digest queued/g)).toHaveLength(1);
    expect(logs).not.toContain('rankfast.example');
  });
});

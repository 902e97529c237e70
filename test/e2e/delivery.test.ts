// Delivery over real sockets: the app listening on a port, a real SMTP server and a real webhook
// receiver. Retries, permanent failures and header-injection attempts end to end.
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmailChannel } from '../../src/delivery/email.js';
import { DEFAULT_PACE, DeliveryPacer, PACE_WINDOW_MS } from '../../src/delivery/pacing.js';
import { loadStudioProfile } from '../../src/studio/profile.js';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

const INQUIRY_TO = 'studio@northlight.example';
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function smtpServer(): Promise<TestSmtpServer> {
  const server = await startSmtpServer();
  cleanups.push(() => server.stop());
  return server;
}

async function webhookReceiver(): Promise<TestWebhookReceiver> {
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  return receiver;
}

async function app(env: Record<string, string>, retry?: { baseMs: number; capMs: number; windowMs: number }): Promise<TestApp> {
  const testApp = await startTestApp({ env, listen: true, ...(retry && { retry }) });
  cleanups.push(() => testApp.close());
  return testApp;
}

async function submit(testApp: TestApp, body: unknown): Promise<string> {
  const response = await fetch(`${testApp.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return referenceOf(text);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('email to the studio', () => {
  it('arrives with To, From, Reply-To, a subject naming person and company, and every field in the body', async () => {
    const smtp = await smtpServer();
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO, MAIL_FROM: 'Northlight <no-reply@northlight.example>' });
    const reference = await submit(testApp, validInquiry());
    const [mail] = await smtp.waitFor(1);
    if (!mail) throw new Error('no mail');

    expect(mail.envelope.to).toEqual([INQUIRY_TO]);
    expect(mail.parsed.to).toMatchObject({ value: [{ address: INQUIRY_TO }] });
    expect(mail.parsed.from?.value).toEqual([{ address: 'no-reply@northlight.example', name: 'Northlight' }]);
    expect(mail.parsed.replyTo?.value).toEqual([{ address: 'ada@example.com', name: 'Ada Lovelace' }]);
    expect(mail.parsed.subject).toBe(`New inquiry from Ada Lovelace (Analytical Engines Ltd) — ${reference}`);
    const text = mail.parsed.text ?? '';
    for (const value of [
      'Ada',
      'Lovelace',
      'ada@example.com',
      'Analytical Engines Ltd',
      'We need a new website for our engine.',
      reference,
    ]) {
      expect(text).toContain(value);
    }
    expect(text).toMatch(/Received: \w+day \d{1,2} \w+ \d{4} at \d\d:\d\d \(UTC\)\n/);
    expect(mail.parsed.headers.get('x-inquiry-reference')).toBe(reference);

    const [delivery] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    expect(delivery).toMatchObject({ channel: 'email', status: 'succeeded', attempts: 1, lastError: null });
  });

  it('escapes the HTML part', async () => {
    const smtp = await smtpServer();
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO });
    await submit(testApp, validInquiry({ message: '<script>alert(1)</script> & <b>bold</b>' }));
    const [mail] = await smtp.waitFor(1);
    expect(mail?.parsed.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;');
    expect(mail?.parsed.html).not.toContain('<script>');
  });

  it('cannot be given extra recipients or headers through any field', async () => {
    const smtp = await smtpServer();
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO });
    await submit(
      testApp,
      validInquiry({
        firstName: 'Eve\r\nBcc: victim@example.com',
        lastName: 'X\nSubject: hacked\r\n\r\nbody',
        company: 'Evil\r\nX-Injected: 1\u2028To: other@example.com',
        email: 'eve@example.com',
      }),
    );
    const [mail] = await smtp.waitFor(1);
    if (!mail) throw new Error('no mail');
    expect(mail.envelope.to).toEqual([INQUIRY_TO]);
    expect(mail.parsed.bcc).toBeUndefined();
    expect(mail.parsed.cc).toBeUndefined();
    expect(mail.parsed.headers.has('x-injected')).toBe(false);
    expect(mail.parsed.to).toMatchObject({ value: [{ address: INQUIRY_TO }] });
    expect(mail.parsed.subject).toMatch(
      /^New inquiry from Eve Bcc: victim@example\.com X Subject: hacked body \(Evil X-Injected: 1 To: other@example\.com\) — INQ-/,
    );
    expect(mail.parsed.replyTo?.value.map((v) => v.address)).toEqual(['eve@example.com']);
    // The raw header block has exactly one Subject, one To and no Bcc.
    const headerBlock = mail.raw.split(/\r?\n\r?\n/)[0] ?? '';
    expect(headerBlock.match(/^Subject:/gim)).toHaveLength(1);
    expect(headerBlock.match(/^To:/gim)).toHaveLength(1);
    expect(headerBlock).not.toMatch(/^Bcc:/im);
  });

  it('shows a name written as an RFC 2047 encoded-word as typed, not as what it encodes', async () => {
    const smtp = await smtpServer();
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO });
    const forged = `=?UTF-8?B?${Buffer.from('CEO <ceo@studio.example>').toString('base64')}?=`;
    await submit(testApp, validInquiry({ firstName: forged, lastName: 'x', company: forged, email: 'eve@example.com' }));
    const [mail] = await smtp.waitFor(1);
    if (!mail) throw new Error('no mail');
    // mailparser decodes encoded-words in quoted names too, as many mail clients do.
    const [replyTo] = mail.parsed.replyTo?.value ?? [];
    expect(replyTo?.address).toBe('eve@example.com');
    expect(replyTo?.name).not.toContain('CEO');
    expect(replyTo?.name.replaceAll('\u200b', '')).toBe(`${forged} x`);
    expect(mail.parsed.subject).not.toContain('CEO');
    expect(mail.parsed.subject?.replaceAll('\u200b', '')).toContain(`${forged} x (${forged})`);
    // The body shows the fields as they were sent.
    expect(mail.parsed.text).toContain(`Name: ${forged} x\n`);
  });

  it('keeps retrying while the SMTP server asks for authentication it was not given (530): the operator can fix that', async () => {
    const server = new SMTPServer({ authOptional: false, disabledCommands: ['STARTTLS'], logger: false });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.server.address() as AddressInfo;
    const testApp = await app({ SMTP_URL: `smtp://127.0.0.1:${port}`, INQUIRY_TO });
    const reference = await submit(testApp, validInquiry());
    const [pending] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => (d?.attempts ?? 0) >= 2,
    );
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending?.lastError).toMatch(/530/);
  });

  it('sends a mail again under the same Message-ID, so a repeat is the same message to the mail system', async () => {
    // The server takes the whole message, then answers the first DATA with a temporary error: the
    // mail arrived, but the service cannot know, and sends it again.
    const messageIds: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          messageIds.push(/^Message-ID: *(.+)$/im.exec(Buffer.concat(chunks).toString('utf8'))?.[1]?.trim() ?? '');
          if (messageIds.length === 1) callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          else callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.server.address() as AddressInfo;
    const testApp = await app({ SMTP_URL: `smtp://127.0.0.1:${port}`, INQUIRY_TO, MAIL_FROM: 'Studio <hello@northlight.example>' });
    const reference = await submit(testApp, validInquiry());
    const [delivery] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    expect(messageIds).toEqual([`<${delivery?.id}@northlight.example>`, `<${delivery?.id}@northlight.example>`]);
  });

  it('is retried while the SMTP server is down and delivered once it is back', async () => {
    const smtp = await smtpServer();
    await smtp.stop();
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO });
    const reference = await submit(testApp, validInquiry());

    const [pending] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => (d?.attempts ?? 0) >= 2,
    );
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending?.lastError).toMatch(/ECONNREFUSED|connect/i);

    await smtp.start();
    await smtp.waitFor(1);
    const [delivered] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    const attempts = await testApp.services.store.outbox.attempts(delivered?.id ?? '');
    expect(attempts.at(-1)?.outcome).toBe('succeeded');
    expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry' && a.error !== null)).toBe(true);
    expect(attempts.map((a) => a.attempt)).toEqual(attempts.map((_, i) => i + 1));
  });

  it('stops on a permanent refusal (SMTP 550) and records it', async () => {
    const smtp = await smtpServer();
    smtp.rejectWith = 550;
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO });
    const reference = await submit(testApp, validInquiry());
    const [failed] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'failed',
    );
    expect(failed?.attempts).toBe(1);
    expect(failed?.lastError).toMatch(/550/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await testApp.services.store.outbox.forReference(reference))[0]?.attempts).toBe(1);
  });
});

describe('an SMTP server without STARTTLS', () => {
  it('is never sent the password over smtp: the attempt fails, to be retried, and says why', async () => {
    const logins: string[] = [];
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: false,
      allowInsecureAuth: true,
      logger: false,
      onAuth: (auth, _session, callback) => {
        logins.push(`${auth.username}:${auth.password}`);
        callback(null, { user: auth.username });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.server.address() as AddressInfo).port;
    const channel = createEmailChannel({
      smtpUrl: `smtp://studio:secret@127.0.0.1:${port}`,
      from: 'Studio <no-reply@example.com>',
      to: 'studio@example.com',
      profile: loadStudioProfile(null),
    });
    cleanups.push(async () => {
      await channel.close?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const result = await channel.send(
      {
        id: 'd1',
        reference: null,
        channel: 'email',
        status: 'pending',
        attempts: 0,
        lastError: null,
        queuedAt: new Date(),
        runAt: new Date(),
        finishedAt: null,
      },
      { kind: 'message', message: { id: 'm1', to: 'ada@example.com', subject: 'Code', body: '123456' } },
    );
    expect(result).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/STARTTLS/i) });
    expect(logins).toEqual([]);
  });
});

describe('an SMTP server that never finishes a send', () => {
  it('fails the attempt at the send deadline, closes that connection, and sends the next mail on a new one', async () => {
    // A raw SMTP server: after the end of the first connection's data it sends continuation lines
    // for ever (never silent, so no socket timeout fires); later connections behave.
    let connectionCount = 0;
    let stuckClosed = false;
    const received: string[] = [];
    const server = createTcpServer((socket) => {
      const stuck = ++connectionCount === 1;
      if (stuck) socket.once('close', () => (stuckClosed = true));
      let data: string[] | null = null;
      let buffered = '';
      socket.on('error', () => {});
      socket.write('220 test ESMTP\r\n');
      socket.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('latin1');
        for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (data !== null) {
            if (line !== '.') {
              data.push(line);
              continue;
            }
            const message = data.join('\n');
            data = null;
            if (stuck) {
              const trickle = setInterval(() => socket.write('250-still working\r\n'), 50);
              socket.once('close', () => clearInterval(trickle));
            } else {
              received.push(message);
              socket.write('250 queued\r\n');
            }
          } else if (/^DATA/i.test(line)) {
            data = [];
            socket.write('354 go ahead\r\n');
          } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
          else socket.write(/^EHLO/i.test(line) ? '250 test\r\n' : '250 OK\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const channel = createEmailChannel({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      from: 'Studio <no-reply@example.com>',
      to: 'studio@example.com',
      profile: loadStudioProfile(null),
      sendDeadlineMs: 1_000,
    });
    cleanups.push(async () => {
      await channel.close?.();
      server.close();
    });
    const message = (id: string) => ({ kind: 'message' as const, message: { id, to: 'ada@example.com', subject: 'Code', body: id } });
    const delivery = (id: string) => ({
      id,
      reference: null,
      channel: 'email',
      status: 'pending' as const,
      attempts: 0,
      lastError: null,
      queuedAt: new Date(),
      runAt: new Date(),
      finishedAt: null,
    });
    const started = performance.now();
    expect(await channel.send(delivery('first'), message('first'))).toEqual({
      outcome: 'retry',
      error: 'the mail server did not finish the send within 1 s; its connection was closed',
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    await until(
      async () => stuckClosed,
      (closed) => closed,
      5_000,
    );
    expect(await channel.send(delivery('second'), message('second'))).toEqual({ outcome: 'succeeded' });
    expect(received).toHaveLength(1);
    expect(connectionCount).toBe(2);
  });
});

describe('a burst of inquiries', () => {
  it('paces the mail while it lasts, never stops it, and sends the rest right after', async () => {
    // The pacer's clock moves 20 ms a tick of the burst, then with real time: a loaded machine slows
    // the burst and the worker alike, but the pace still sees 200 inquiries a second.
    const clock = { ms: 1_000 * PACE_WINDOW_MS, realFrom: Number.NaN };
    const now = () => clock.ms + (Number.isNaN(clock.realFrom) ? 0 : performance.now() - clock.realFrom);
    const smtp = await smtpServer();
    const testApp = await startTestApp({ env: { SMTP_URL: smtp.url, INQUIRY_TO }, pacer: new DeliveryPacer(DEFAULT_PACE, now) });
    cleanups.push(() => testApp.close());
    const [email] = testApp.services.channels;
    if (!email) throw new Error('no email channel');
    const send = email.send;
    const sentAt: number[] = []; // when each mail went to the mail server, on the pacer's clock
    vi.spyOn(email, 'send').mockImplementation((delivery, payload) => {
      sentAt.push(now());
      return send(delivery, payload);
    });
    // 4 inquiries every 20 ms (200 a second) for two seconds, through the service as HTTP and MCP call it.
    const startedAt = clock.ms;
    let n = 0;
    for (let tick = 0; tick < 100; tick++, clock.ms += 20) {
      const four = Array.from({ length: 4 }, () => validInquiry({ email: `burst-${++n}@example.com`, message: `Burst ${n}` }));
      await Promise.all([...four.map((inquiry) => testApp.services.inquiries.submit(inquiry)), sleep(20)]);
    }
    const burstEndedAt = clock.ms;
    // Paced, not stopped: a chunk is due every chunk/rate = 500 ms, so one goes in the burst's last
    // two of those (if need be as it ends: the pacer's clock stands still until then).
    const chunkMs = (DEFAULT_PACE.chunk * 1000) / DEFAULT_PACE.pacedPerS;
    const lateStart = burstEndedAt - 2 * chunkMs;
    expect(lateStart).toBeGreaterThan(startedAt + 2 * PACE_WINDOW_MS);
    await vi.waitFor(() => expect(sentAt.filter((at) => at >= lateStart).length).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    // Until a quarter-second window counts more than its share, mail leaves unpaced: allow for two
    // windows' share, and claims already under way.
    const beforePacing = (2 * DEFAULT_PACE.busyAbovePerS * PACE_WINDOW_MS) / 1000 + 10;
    const duringBurst = sentAt.filter((at) => at <= burstEndedAt).length;
    expect(duringBurst).toBeLessThanOrEqual(beforePacing + DEFAULT_PACE.chunk + 2 * DEFAULT_PACE.pacedPerS);
    clock.realFrom = performance.now();
    await smtp.waitFor(n, 20_000);
    expect(new Set(smtp.received.map((mail) => mail.parsed.headers.get('x-inquiry-reference'))).size).toBe(n);
  });
});

describe('webhook', () => {
  it('is signed per Standard Webhooks and carries the documented payload', async () => {
    const receiver = await webhookReceiver();
    const testApp = await app({ WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
    const reference = await submit(testApp, validInquiry({ company: undefined }));
    await receiver.waitFor((r) => r.length === 1);
    const [request] = receiver.received;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(Math.abs(Number(request?.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(request?.verified).not.toBeNull();
    const payload = JSON.parse(request?.body ?? '{}');
    expect(payload).toEqual({
      type: 'inquiry.received',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      data: {
        reference,
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        company: null,
        message: 'We need a new website for our engine.',
        receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        client_id: null,
        source: 'api',
        agent: null,
      },
    });
  });

  it('answering 500, 500, 200 is delivered once, with one stable webhook-id, every attempt recorded', async () => {
    const receiver = await webhookReceiver();
    receiver.script.push(500, 500, 200);
    const testApp = await app({ WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
    const reference = await submit(testApp, validInquiry());
    const [delivery] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
    // One event, one body: its timestamp is the inquiry's receipt, whichever attempt carries it.
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    const { timestamp, data } = JSON.parse(receiver.received[0]?.body ?? '{}');
    expect(timestamp).toBe(data.receivedAt);
    const attempts = await testApp.services.store.outbox.attempts(delivery?.id ?? '');
    expect(attempts.map((a) => [a.outcome, a.error])).toEqual([
      ['retry', 'webhook answered HTTP 500'],
      ['retry', 'webhook answered HTTP 500'],
      ['succeeded', null],
    ]);
    expect(attempts[1]?.attemptedAt.getTime()).toBeGreaterThan(attempts[0]?.attemptedAt.getTime() ?? 0);
  });

  it("waits as long as a 503's Retry-After asks before the next attempt", async () => {
    const receiver = await webhookReceiver();
    receiver.script.push({ status: 503, headers: { 'retry-after': '2' } });
    const testApp = await app(
      { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET },
      { baseMs: 50, capMs: 5_000, windowMs: 60_000 },
    );
    const reference = await submit(testApp, validInquiry());
    await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    const [first, second] = await testApp.services.store.outbox.attempts(
      (await testApp.services.store.outbox.forReference(reference))[0]?.id ?? '',
    );
    expect(first?.outcome).toBe('retry');
    expect(second?.outcome).toBe('succeeded');
    // The backoff would be 25-50 ms: only the receiver's Retry-After makes the wait 2 s.
    expect((second?.attemptedAt.getTime() ?? 0) - (first?.attemptedAt.getTime() ?? 0)).toBeGreaterThanOrEqual(1_900);
  });

  it('treats a 4xx as permanent, but retries 408 and 429', async () => {
    const receiver = await webhookReceiver();
    receiver.script.push(429, 408, 410);
    const testApp = await app({ WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
    const reference = await submit(testApp, validInquiry());
    const [failed] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'failed',
    );
    expect(failed).toMatchObject({ attempts: 3, lastError: 'webhook answered HTTP 410' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(3);
  });

  it('does not follow a redirect: the attempt is retried, and the error names where it pointed', async () => {
    const receiver = await webhookReceiver();
    receiver.script.push({ status: 308, headers: { location: 'https://hooks.example.com/inquiry' } });
    const testApp = await app(
      { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET },
      { baseMs: 20, capMs: 40, windowMs: 60_000 },
    );
    const reference = await submit(testApp, validInquiry());
    const [delivered] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    const [redirected] = await testApp.services.store.outbox.attempts(delivered?.id ?? '');
    expect(redirected).toMatchObject({
      outcome: 'retry',
      error:
        'webhook answered HTTP 308, a redirect to https://hooks.example.com/inquiry (not followed: WEBHOOK_URL must be the address that answers)',
    });
    expect(receiver.received).toHaveLength(2);
  });

  it('gives a delivery up as dead when the retry window is spent, and a re-queue starts a new window', async () => {
    const receiver = await webhookReceiver();
    receiver.script.push(...Array.from({ length: 100 }, () => 503));
    const testApp = await app({ WEBHOOK_URL: receiver.url }, { baseMs: 20, capMs: 40, windowMs: 500 });
    const reference = await submit(testApp, validInquiry());
    const [dead] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'dead',
    );
    expect(dead?.attempts).toBeGreaterThanOrEqual(2);
    expect(receiver.received[0]?.headers['webhook-signature']).toBeUndefined();
    // The attempt that spent the window says so; those before it were retried.
    const attempts = await testApp.services.store.outbox.attempts(dead?.id ?? '');
    expect(attempts.map((attempt) => attempt.outcome)).toEqual([...Array(attempts.length - 1).fill('retry'), 'dead']);
    expect(attempts.at(-1)?.error).toBe('webhook answered HTTP 503');

    // Re-queued (as the CLI does), it gets a fresh retry window: two more failures, then success.
    receiver.script.splice(0, receiver.script.length, 503, 503, 200);
    expect(await testApp.services.store.outbox.requeue(new Date(), reference)).toBe(1);
    const [delivered] = await until(
      () => testApp.services.store.outbox.forReference(reference),
      ([d]) => d?.status === 'succeeded',
    );
    expect(delivered?.attempts).toBe((dead?.attempts ?? 0) + 3);
  });

  it('delivers to both channels independently', async () => {
    const smtp = await smtpServer();
    const receiver = await webhookReceiver();
    receiver.script.push(500);
    const testApp = await app({ SMTP_URL: smtp.url, INQUIRY_TO, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
    const reference = await submit(testApp, validInquiry());
    const deliveries = await until(
      () => testApp.services.store.outbox.forReference(reference),
      (ds) => ds.length === 2 && ds.every((d) => d.status === 'succeeded'),
    );
    expect(deliveries.map((d) => [d.channel, d.attempts])).toEqual([
      ['email', 1],
      ['webhook', 2],
    ]);
    expect(smtp.received).toHaveLength(1);
  });
});

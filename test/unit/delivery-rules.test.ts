// Pure delivery rules: backoff, webhook signatures and status classes, SMTP error classes, and
// the header-safety of composed mail.
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, nextAttemptAt, retryDelayMs } from '../../src/delivery/backoff.js';
import { classifySmtpError, composeInquiryEmail, headerSafe, withTransportDefaults } from '../../src/delivery/email.js';
import { classifyWebhookStatus, retryAfterDelayMs, signWebhook, webhookPayload } from '../../src/delivery/webhook.js';
import type { InquiryRecord } from '../../src/storage/ports.js';
import { TEST_WEBHOOK_SECRET } from '../helpers/webhook.js';

describe('retry backoff', () => {
  it('grows exponentially from the base, stays within [ceiling/2, ceiling] and never passes the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (failures, random) => {
        const ceiling = Math.min(DEFAULT_RETRY_POLICY.capMs, DEFAULT_RETRY_POLICY.baseMs * 2 ** (failures - 1));
        const delay = retryDelayMs(failures, DEFAULT_RETRY_POLICY, () => random);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(ceiling);
      }),
    );
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, () => 1)).toBe(10_000);
    expect(retryDelayMs(4, DEFAULT_RETRY_POLICY, () => 1)).toBe(80_000);
    expect(retryDelayMs(50, DEFAULT_RETRY_POLICY, () => 1)).toBe(3_600_000);
  });

  it('keeps retrying for at least 24 hours, then gives up', () => {
    expect(DEFAULT_RETRY_POLICY.windowMs).toBeGreaterThanOrEqual(24 * 3_600_000);
    const created = new Date('2026-01-01T00:00:00Z');
    let now = created;
    let failures = 0;
    for (;;) {
      const next = nextAttemptAt(created, now, ++failures, DEFAULT_RETRY_POLICY, () => 0.5);
      if (next === null) break;
      now = next;
    }
    expect(now.getTime() - created.getTime()).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(failures).toBeLessThan(200);
  });
});

describe('webhook', () => {
  it('signs exactly as the Standard Webhooks reference library verifies', () => {
    fc.assert(
      fc.property(fc.json(), fc.uuid(), (body, id) => {
        const timestamp = Math.floor(Date.now() / 1000);
        const headers = {
          'webhook-id': `msg_${id}`,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(TEST_WEBHOOK_SECRET, `msg_${id}`, timestamp, body),
        };
        expect(() => new Webhook(TEST_WEBHOOK_SECRET).verify(body, headers)).not.toThrow();
        expect(() => new Webhook(TEST_WEBHOOK_SECRET).verify(`${body} `, headers)).toThrow();
      }),
      { numRuns: 200 },
    );
  });

  it('carries the submitting agent as client_id, and null for a person', () => {
    const inquiry = {
      reference: 'INQ-ABCDEF',
      firstName: 'A',
      lastName: 'B',
      email: 'a@example.com',
      company: null,
      message: 'm',
      clientId: 'agt_123',
      receivedAt: new Date('2026-01-01T00:00:00Z'),
      source: 'api' as const,
    };
    expect(webhookPayload(inquiry).data).toMatchObject({ client_id: 'agt_123', company: null, source: 'api' });
    expect(webhookPayload({ ...inquiry, source: null }).data.source).toBeNull();
    expect(webhookPayload({ ...inquiry, clientId: null }).data).toMatchObject({ client_id: null, agent: null });
    const agent = { clientId: 'agt_123', name: 'Desk agent', verifiedEmail: 'person@example.com' };
    expect(webhookPayload(inquiry, agent).data.agent).toEqual({ name: 'Desk agent', verified_email: 'person@example.com' });
    expect(webhookPayload(inquiry, { ...agent, verifiedEmail: null }).data.agent).toEqual({ name: 'Desk agent', verified_email: null });
    // The event's time is the inquiry's receipt (Standard Webhooks), not the attempt's.
    expect(webhookPayload(inquiry).timestamp).toBe('2026-01-01T00:00:00.000Z');
  });

  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:02:00 GMT', 120_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['1.5', undefined],
    ['2026-01-01T00:02:00Z', undefined],
  ])('reads Retry-After %j as a wait of %s ms (RFC 9110 §10.2.3)', (value, ms) => {
    expect(retryAfterDelayMs(value, new Date('2026-01-01T00:00:00Z'))).toBe(ms);
  });

  it('retries a 429 or 503 no sooner than its Retry-After, up to the backoff cap, and never sooner than the backoff', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const asked = classifyWebhookStatus(503, { retryAfter: '600' }, now);
    expect(asked).toEqual({ outcome: 'retry', error: 'webhook answered HTTP 503', retryAfterMs: 600_000 });
    const at = (askedMs?: number) => nextAttemptAt(now, now, 1, DEFAULT_RETRY_POLICY, () => 1, askedMs)?.getTime() ?? 0;
    expect(at(600_000) - now.getTime()).toBe(600_000);
    expect(at(1_000) - now.getTime()).toBe(10_000);
    expect(at(7 * 24 * 3_600_000) - now.getTime()).toBe(DEFAULT_RETRY_POLICY.capMs);
    expect(at() - now.getTime()).toBe(10_000);
    expect(classifyWebhookStatus(429, { retryAfter: 'later' }).outcome).toBe('retry');
    expect(classifyWebhookStatus(429, { retryAfter: 'later' })).not.toHaveProperty('retryAfterMs');
  });

  it('names the target of a redirect, which is not followed, in the error: cut short, and only for a 3xx', () => {
    const to = 'https://hooks.example.com/inquiry';
    expect(classifyWebhookStatus(301, { location: to })).toEqual({
      outcome: 'retry',
      error: `webhook answered HTTP 301, a redirect to ${to} (not followed: WEBHOOK_URL must be the address that answers)`,
    });
    expect(classifyWebhookStatus(302)).toEqual({ outcome: 'retry', error: 'webhook answered HTTP 302' });
    expect(classifyWebhookStatus(503, { location: to })).toEqual({ outcome: 'retry', error: 'webhook answered HTTP 503' });
    const long = classifyWebhookStatus(307, { location: `https://hooks.example.com/${'a'.repeat(1_000)}` });
    expect(long.outcome === 'retry' && long.error).toBe(
      `webhook answered HTTP 307, a redirect to https://hooks.example.com/${'a'.repeat(200 - 26)}… (not followed: WEBHOOK_URL must be the address that answers)`,
    );
  });

  it.each([
    [200, 'succeeded'],
    [204, 'succeeded'],
    [301, 'retry'],
    [400, 'failed'],
    [401, 'failed'],
    [404, 'failed'],
    [408, 'retry'],
    [410, 'failed'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
  ])('HTTP %i → %s', (status, outcome) => {
    expect(classifyWebhookStatus(status).outcome).toBe(outcome);
  });
});

describe('email', () => {
  it.each([
    [{ responseCode: 550, command: 'RCPT TO' }, 'failed'],
    [{ responseCode: 552, command: 'DATA' }, 'failed'],
    [{ responseCode: 451, command: 'RCPT TO' }, 'retry'],
    [{ responseCode: 535, command: 'AUTH PLAIN' }, 'retry'],
    // The operator's to fix: authentication or TLS required, a policy refusal, a full mailbox.
    [{ responseCode: 530, command: 'MAIL FROM', response: '530 Error: authentication Required' }, 'retry'],
    [{ responseCode: 530, command: 'MAIL FROM', response: '530 5.7.0 Must issue a STARTTLS command first' }, 'retry'],
    [{ responseCode: 550, command: 'RCPT TO', response: '550 5.7.1 Relaying denied' }, 'retry'],
    [{ responseCode: 552, command: 'RCPT TO', response: '552 5.2.2 Mailbox full' }, 'retry'],
    [{ responseCode: 550, command: 'RCPT TO', response: '550 5.1.1 No such user' }, 'failed'],
    [{ responseCode: 552, command: 'DATA', response: '552 5.3.4 Message too big' }, 'failed'],
    [{ code: 'ECONNREFUSED', command: 'CONN' }, 'retry'],
    [new Error('socket hang up'), 'retry'],
  ])('SMTP error %o → %s', (error, outcome) => {
    expect(classifySmtpError(error).outcome).toBe(outcome);
  });

  it('headerSafe leaves no line break, control character, bidi override or invisible character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the property is about control characters
        expect(headerSafe(value)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\u3164]/u);
      }),
    );
    expect(headerSafe('Eve\u0085Email: x@evil.test')).toBe('Eve Email: x@evil.test');
    expect(headerSafe('Eve \u202Egnp.exe')).toBe('Eve gnp.exe');
    // Zero-width space, soft hyphen, word joiner, BOM and a Hangul filler: gone, the word whole again.
    expect(headerSafe('Pay\u200bPal Se\u00adcu\u2060ri\ufeffty\u3164Team')).toBe('PayPal SecurityTeam');
    expect(headerSafe('Zoë Ørsted 李')).toBe('Zoë Ørsted 李');
  });

  it('puts no field of the inquiry into a header unescaped, nor a line of its own into the body', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (first, last, company) => {
        const inquiry: InquiryRecord = {
          reference: 'INQ-ABCDEF',
          firstName: first,
          lastName: last,
          email: 'a@example.com',
          company,
          message: 'm',
          clientId: null,
          receivedAt: new Date(),
          source: 'api' as const,
        };
        const mail = composeInquiryEmail(inquiry, { from: 'Studio <s@example.com>', to: 'studio@example.com' });
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the property is about control characters
        expect(mail.subject).not.toMatch(/[\r\n\u0000]/);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the property is about control characters
        expect(mail.replyTo.name).not.toMatch(/[\r\n\u0000]/);
        expect(mail.to).toBe('studio@example.com');
        // In the body too, each field stays on its own line: none can add a line such as a forged "Email:".
        const [fieldLines = ''] = mail.text.split('\n\nMessage:');
        const labels = ['Name', ...(headerSafe(company) === '' ? [] : ['Company']), 'Email'];
        expect(fieldLines.split('\n').map((line) => line.split(':')[0])).toEqual(labels);
      }),
    );
  });

  it('adds pooling and timeouts to SMTP_URL without overriding the operator', () => {
    const url = new URL(withTransportDefaults('smtp://u:p@mail.example.com:587?socketTimeout=5000'));
    expect(url.searchParams.get('pool')).toBe('true');
    expect(url.searchParams.get('socketTimeout')).toBe('5000');
    expect(url.searchParams.get('connectionTimeout')).toBe('10000');
    expect(url.username).toBe('u');
  });

  it('sends a password over smtp: only after STARTTLS, unless the operator says otherwise', () => {
    const requireTls = (smtpUrl: string) => new URL(withTransportDefaults(smtpUrl)).searchParams.get('requireTLS');
    expect(requireTls('smtp://u:p@mail.example.com:587')).toBe('true');
    expect(requireTls('smtp://u:p@mail.example.com:587?requireTLS=false')).toBe('false');
    expect(requireTls('smtp://u:p@localhost:1025?ignoreTLS=true')).toBeNull(); // a local test server, chosen so
    expect(requireTls('smtp://mail.example.com:25')).toBeNull(); // no password to protect
    expect(requireTls('smtps://u:p@mail.example.com:465')).toBeNull(); // TLS from the first byte
  });
});

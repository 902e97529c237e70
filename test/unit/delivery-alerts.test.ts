// The delivery alerts' decisions and words: what to tell about a channel given its health and its
// last alert, where it goes, and the mail and event that tell it.
import { describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPE, alertEvent, alertMail } from '../../src/delivery/alert-text.js';
import { ALERT_INTERVAL_MS, alertRoutes, decideAlert } from '../../src/delivery/alerts.js';
import type { ChannelHealth } from '../../src/delivery/health.js';

const now = new Date('2026-11-27T14:05:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const healthy: ChannelHealth = {
  channel: 'webhook',
  pending: 0,
  retrying: 0,
  dead: 0,
  failed: 0,
  lastError: null,
  lastSuccessAt: ago(1000),
  failingSince: null,
  alerting: false,
  reason: null,
};
const failingHealth: ChannelHealth = {
  ...healthy,
  retrying: 3,
  lastError: { message: 'webhook answered HTTP 503', at: ago(60_000) },
  lastSuccessAt: ago(3_600_000),
  failingSince: ago(20 * 60_000),
  alerting: true,
  reason: 'failing',
};
const state = (kind: 'alerting' | 'recovered', alertedAgo: number) => ({ channel: 'webhook', state: kind, alertedAt: ago(alertedAgo) });

describe('decideAlert', () => {
  it('alerts on a channel never alerted about, and says nothing of one healthy', () => {
    expect(decideAlert(failingHealth, undefined, now)).toBe('alerting');
    expect(decideAlert(healthy, undefined, now)).toBeNull();
  });

  it('tells an outage once, however long it lasts', () => {
    expect(decideAlert(failingHealth, state('alerting', 1000), now)).toBeNull();
    expect(decideAlert(failingHealth, state('alerting', 10 * ALERT_INTERVAL_MS), now)).toBeNull();
  });

  it('tells the recovery of a channel alerted about, once', () => {
    expect(decideAlert(healthy, state('alerting', 1000), now)).toBe('recovered');
    expect(decideAlert(healthy, state('recovered', 1000), now)).toBeNull();
  });

  it('alerts on a new outage an hour after the last alert at the soonest', () => {
    expect(decideAlert(failingHealth, state('recovered', ALERT_INTERVAL_MS - 1), now)).toBeNull();
    expect(decideAlert(failingHealth, state('recovered', ALERT_INTERVAL_MS), now)).toBe('alerting');
  });
});

describe('alertRoutes', () => {
  it('sends each channel’s alerts through the other, only where both are configured', () => {
    expect([...alertRoutes({ inquiryTo: 'studio@example.com', webhook: true })]).toEqual([
      ['webhook', { channel: 'email', to: 'studio@example.com' }],
      ['email', { channel: 'webhook' }],
    ]);
    expect(alertRoutes({ inquiryTo: 'studio@example.com', webhook: false }).size).toBe(0);
    expect(alertRoutes({ inquiryTo: null, webhook: true }).size).toBe(0);
  });
});

describe('the alert’s words', () => {
  it('mails since when the channel fails, in the studio’s time zone, and its last error', () => {
    const { subject, body } = alertMail('alerting', failingHealth, 'Europe/London');
    expect(subject).toBe('Inquiries are not reaching your webhook');
    expect(body).toContain('failed since Friday 27 November 2026 at 13:45 (Europe/London)');
    expect(body).toContain('Last error (Friday 27 November 2026 at 14:04 (Europe/London)): webhook answered HTTP 503');
    expect(body).toContain('retrying: 3');
  });

  it('mails a delivery given up, and the recovery', () => {
    const givenUp = { ...failingHealth, failingSince: null, reason: 'given-up' as const, dead: 1 };
    expect(alertMail('alerting', givenUp, 'UTC').body).toContain('A delivery to your webhook was given up.');
    expect(alertMail('recovered', healthy, 'UTC')).toEqual({
      subject: 'Inquiries reach your webhook again',
      body: expect.stringContaining('delivers again since Friday 27 November 2026 at 14:04 (UTC)'),
    });
  });

  it('posts an event with the health, timed when the alert was queued', () => {
    expect(alertEvent('alerting', { ...failingHealth, channel: 'email' }, now)).toEqual({
      type: ALERT_EVENT_TYPE,
      timestamp: '2026-11-27T14:05:00.000Z',
      data: {
        channel: 'email',
        state: 'alerting',
        reason: 'failing',
        failingSince: '2026-11-27T13:45:00.000Z',
        lastError: { message: 'webhook answered HTTP 503', at: '2026-11-27T14:04:00.000Z' },
        lastSuccessAt: '2026-11-27T13:05:00.000Z',
        pending: 0,
        retrying: 3,
        dead: 0,
        failed: 0,
      },
    });
    expect(alertEvent('recovered', healthy, now).data).toMatchObject({ state: 'recovered', reason: null });
  });
});

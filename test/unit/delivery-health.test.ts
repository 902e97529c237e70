// The health of a channel judged from what the store knows: counts, the last error, since when it
// fails, and when it alerts (failing for 15 minutes, or a delivery given up since its last success).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alertReason, deliveryHealth, FAILING_ALERT_MS, judgeChannel, NOTHING_KNOWN } from '../../src/delivery/health.js';
import { type RecordedAttempt, summarise } from '../../src/storage/channel-health.js';
import type { ChannelHealthFacts } from '../../src/storage/ports.js';

const now = new Date('2026-11-27T14:05:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const facts = (overrides: Partial<ChannelHealthFacts> = {}): ChannelHealthFacts => ({ ...NOTHING_KNOWN('webhook'), ...overrides });

describe('judgeChannel', () => {
  it('reports a channel never used as healthy, with nothing pending and no error', () => {
    expect(judgeChannel('email', undefined, now)).toEqual({
      channel: 'email',
      pending: 0,
      retrying: 0,
      dead: 0,
      failed: 0,
      lastError: null,
      lastSuccessAt: null,
      failingSince: null,
      alerting: false,
      reason: null,
    });
  });

  it('reports the counts and the last error with its time', () => {
    const health = judgeChannel(
      'webhook',
      facts({ waiting: 3, retrying: 2, dead: 1, failed: 4, lastFailure: { at: ago(60_000), error: 'HTTP 503' } }),
      now,
    );
    expect(health).toMatchObject({ pending: 3, retrying: 2, dead: 1, failed: 4, lastError: { message: 'HTTP 503', at: ago(60_000) } });
  });

  it('alerts once every attempt has failed for 15 minutes, not a millisecond before', () => {
    expect(judgeChannel('webhook', facts({ failingSince: ago(FAILING_ALERT_MS - 1) }), now)).toMatchObject({
      alerting: false,
      reason: null,
      failingSince: ago(FAILING_ALERT_MS - 1),
    });
    expect(judgeChannel('webhook', facts({ failingSince: ago(FAILING_ALERT_MS) }), now)).toMatchObject({
      alerting: true,
      reason: 'failing',
    });
  });

  it('alerts on a delivery given up (dead) since the last success, not on one given up before it', () => {
    expect(alertReason(facts({ dead: 1, lastGivenUpAt: ago(10), lastSuccessAt: null }), now)).toBe('given-up');
    expect(alertReason(facts({ dead: 1, lastGivenUpAt: ago(10), lastSuccessAt: ago(20) }), now)).toBe('given-up');
    expect(alertReason(facts({ dead: 1, lastGivenUpAt: ago(20), lastSuccessAt: ago(10) }), now)).toBeNull();
  });

  it('names failing before given up when both hold', () => {
    expect(alertReason(facts({ failingSince: ago(FAILING_ALERT_MS), lastGivenUpAt: ago(1) }), now)).toBe('failing');
  });
});

describe('deliveryHealth', () => {
  it('answers for each configured channel in order, whatever else the store knows', async () => {
    const outbox = { health: async () => [facts({ channel: 'other', dead: 9 }), facts({ channel: 'email', waiting: 2 })] };
    const health = await deliveryHealth(outbox, ['email', 'webhook'], now);
    expect(health.map(({ channel, pending }) => [channel, pending])).toEqual([
      ['email', 2],
      ['webhook', 0],
    ]);
  });
});

describe('summarise (one batch of attempts)', () => {
  const attempt = (at: number, succeeded: boolean): RecordedAttempt => ({
    channel: 'email',
    succeeded,
    at,
    error: succeeded ? null : `e${at}`,
  });

  it('fails since the first failure after the last success, or not at all when the last attempt succeeded', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ at: fc.integer({ min: 0, max: 1000 }), succeeded: fc.boolean() }), { maxLength: 20 }), (drawn) => {
        const attempts = drawn.map(({ at, succeeded }) => attempt(at, succeeded));
        const row = summarise('email', attempts);
        const successes = attempts.filter((a) => a.succeeded).map((a) => a.at);
        const failures = attempts.filter((a) => !a.succeeded).map((a) => a.at);
        const lastSuccess = successes.length > 0 ? Math.max(...successes) : null;
        const after = failures.filter((at) => lastSuccess === null || at > lastSuccess);
        expect(row.count).toBe(successes.length);
        expect(row.last_success_at).toBe(lastSuccess);
        expect(row.last_failure_at).toBe(failures.length > 0 ? Math.max(...failures) : null);
        expect(row.failing_since).toBe(after.length > 0 ? Math.min(...after) : null);
        if (row.last_failure_at !== null) expect(row.last_error).toBe(`e${row.last_failure_at}`);
      }),
    );
  });
});

// One delivery attempt (src/delivery/attempt.ts) on fake parts: it waits for a send slot, starts no
// send once stopping or once the lease may be another worker's, records what the send said (a
// retry, or dead past the window), and reports a delivery.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type AttemptOptions, createAttempts, outcomeOf } from '../../src/delivery/attempt.js';
import { DEFAULT_RETRY_POLICY } from '../../src/delivery/backoff.js';
import type { Channel, SendResult } from '../../src/delivery/channel.js';
import { Slots } from '../../src/delivery/slots.js';
import type { AttemptOutcome, AttemptRecord, DeliveryRecord, DueDelivery } from '../../src/storage/ports.js';

const NOW = new Date('2025-01-02T00:00:00Z');
const HOUR = 60 * 60 * 1000;

function due(id: string, { channel = 'email', queuedAt = new Date(NOW.getTime() - HOUR), attempts = 0 } = {}): DueDelivery {
  return {
    delivery: { id, reference: null, channel, status: 'pending', attempts, runAt: queuedAt, lastError: null, queuedAt, finishedAt: null },
    payload: { kind: 'message', message: { id, to: 'ada@example.com', subject: 'Your code', body: '123456' } },
  };
}

/** Attempts through a channel answering `result`, with every part they are handed recorded. */
function attemptsWith(send: () => Promise<SendResult>, overrides: Partial<AttemptOptions> = {}) {
  const state = { running: true, held: true, recorded: true };
  const sent: string[] = [];
  const givenBack: string[] = [];
  const records: { id: string; outcome: AttemptOutcome; error: string | null }[] = [];
  /** The attempts as recorded, with their timing. */
  const written: AttemptRecord['attempt'][] = [];
  const delivered: { channel: string; seconds: number }[] = [];
  const lines: { level: number; msg: string }[] = [];
  const channel: Channel = {
    name: 'email',
    send: async (delivery) => {
      sent.push(delivery.id);
      return send();
    },
  };
  const attempt = createAttempts({
    channels: new Map([[channel.name, channel]]),
    sendSlots: () => undefined,
    isRunning: () => state.running,
    stillHeld: () => state.held,
    giveBack: async (id) => void givenBack.push(id),
    record: async (delivery, attempt, outcome) => {
      records.push({ id: delivery.id, outcome, error: attempt.error });
      written.push(attempt);
      return state.recorded;
    },
    retry: DEFAULT_RETRY_POLICY,
    now: () => NOW,
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    onDelivered: (channel, seconds) => void delivered.push({ channel, seconds }),
    ...overrides,
  });
  return { attempt, state, sent, givenBack, records, written, delivered, lines };
}

const succeeds = async (): Promise<SendResult> => ({ outcome: 'succeeded' });

describe('an attempt', () => {
  it('sends, records the success, logs it and reports the time since the delivery was queued', async () => {
    const { attempt, sent, records, delivered, lines } = attemptsWith(succeeds);
    await attempt(due('d1'));
    expect(sent).toEqual(['d1']);
    expect(records).toEqual([{ id: 'd1', outcome: { outcome: 'succeeded' }, error: null }]);
    expect(delivered).toEqual([{ channel: 'email', seconds: 3600 }]);
    expect(lines.map((line) => line.msg)).toEqual(['message delivered']);
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'message delivered', attempt: 1, durationMs: expect.any(Number) })]);
  });

  it('logs a permanent failure as an error, with its attempt number and error; its duration is recorded', async () => {
    const { attempt, written, lines } = attemptsWith(async () => ({ outcome: 'failed', error: '550 no such user' }));
    await attempt(due('d1', { attempts: 2 }));
    expect(written).toEqual([expect.objectContaining({ outcome: 'failed', error: '550 no such user', durationMs: expect.any(Number) })]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'delivery failed permanently; re-queue it with the CLI once fixed',
        attempt: 3,
        error: '550 no such user',
      }),
    ]);
  });

  it('logs a delivery given up after the retry window as an error; its duration is recorded', async () => {
    const { attempt, written, lines } = attemptsWith(async () => ({ outcome: 'retry', error: 'timed out' }));
    await attempt(due('d1', { attempts: 40, queuedAt: new Date(NOW.getTime() - DEFAULT_RETRY_POLICY.windowMs) }));
    expect(written).toEqual([expect.objectContaining({ outcome: 'dead', error: 'timed out', durationMs: expect.any(Number) })]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'delivery given up after the retry window; re-queue it with the CLI',
        attempt: 41,
        error: 'timed out',
      }),
    ]);
  });

  it('logs a failed attempt to be retried as a warning, with when; its duration is recorded', async () => {
    const { attempt, records, written, lines } = attemptsWith(async () => ({ outcome: 'retry', error: '503' }));
    await attempt(due('d1'));
    expect(written).toEqual([expect.objectContaining({ outcome: 'retry', error: '503', durationMs: expect.any(Number) })]);
    const runAt = records[0]?.outcome.outcome === 'retry' ? records[0].outcome.runAt : undefined;
    expect(runAt).toBeInstanceOf(Date);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'delivery attempt failed; will retry',
        attempt: 1,
        error: '503',
        retryAt: runAt?.toISOString(),
      }),
    ]);
  });

  it('records a send that throws as a retry, with its message', async () => {
    const { attempt, records } = attemptsWith(() => Promise.reject(new Error('connection reset')));
    await attempt(due('d1'));
    expect(records).toEqual([
      { id: 'd1', outcome: { outcome: 'retry', error: 'connection reset', runAt: expect.any(Date) }, error: 'connection reset' },
    ]);
  });

  it('records a retry for a channel this process is not configured with, sending nothing', async () => {
    const { attempt, sent, records } = attemptsWith(succeeds);
    await attempt(due('d1', { channel: 'webhook' }));
    expect(sent).toEqual([]);
    expect(records[0]?.outcome).toMatchObject({ outcome: 'retry', error: 'channel "webhook" is not configured in this process' });
  });

  it("starts no send once the lease may be another worker's, and records nothing", async () => {
    const { attempt, state, sent, records, lines } = attemptsWith(succeeds);
    state.held = false;
    await attempt(due('d1'));
    expect(sent).toEqual([]);
    expect(records).toEqual([]);
    expect(lines.map((line) => line.msg)).toEqual(['the lease ran out before the send could start; left to the worker that holds it now']);
  });

  it('once stopping, starts no send and gives the delivery back at once', async () => {
    const { attempt, state, sent, givenBack } = attemptsWith(succeeds);
    state.running = false;
    await attempt(due('d1'));
    expect(sent).toEqual([]);
    expect(givenBack).toEqual(['d1']);
  });

  it('leaves a delivery to its lease when it cannot be given back', async () => {
    const { attempt, state } = attemptsWith(succeeds, { giveBack: () => Promise.reject(new Error('the database is down')) });
    state.running = false;
    await expect(attempt(due('d1'))).resolves.toBeUndefined();
  });

  it('waits for a slot of its channel, and gives it back after the send', async () => {
    const slots = new Slots(1);
    const { attempt, sent } = attemptsWith(succeeds, { sendSlots: () => slots });
    await slots.take(); // the only connection is busy
    const waiting = attempt(due('d1'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    slots.give();
    await waiting;
    expect(sent).toEqual(['d1']);
    expect(await slots.take()).toBe(true); // the slot came back
  });

  it('gives the delivery back, unsent, when its wait for a slot is abandoned', async () => {
    const slots = new Slots(1);
    const { attempt, sent, givenBack } = attemptsWith(succeeds, { sendSlots: () => slots });
    await slots.take();
    const abandoned = attempt(due('d1'));
    slots.abandonWaiting();
    await abandoned;
    expect(sent).toEqual([]);
    expect(givenBack).toEqual(['d1']);
  });

  it('gives back a slot it got just as the worker stopped, and the delivery with it', async () => {
    const slots = new Slots(1);
    const { attempt, state, sent, givenBack } = attemptsWith(succeeds, { sendSlots: () => slots });
    state.running = false;
    await attempt(due('d1'));
    expect(sent).toEqual([]);
    expect(givenBack).toEqual(['d1']);
    expect(await slots.take()).toBe(true);
  });

  it('says an outcome refused by the outbox is no longer its own, and reports no delivery', async () => {
    const { attempt, state, delivered, lines } = attemptsWith(succeeds);
    state.recorded = false;
    await attempt(due('d1'));
    expect(delivered).toEqual([]);
    expect(lines.map((line) => line.msg)).toEqual(['the delivery is no longer held under this lease; outcome not recorded again']);
  });

  it('says when it could not record before stopping', async () => {
    const { attempt, lines } = attemptsWith(succeeds, { record: () => Promise.reject(new Error('stopped')) });
    await attempt(due('d1'));
    expect(lines.map((line) => line.msg)).toEqual([
      'could not record a delivery attempt before stopping; it is tried again after its lease',
    ]);
  });
});

describe('the outcome of an attempt', () => {
  const delivery = (queuedAt: Date, attempts = 0): DeliveryRecord => due('d', { queuedAt, attempts }).delivery;

  it('is the send result itself unless a retry', () => {
    expect(outcomeOf(delivery(NOW), { outcome: 'succeeded' }, NOW, DEFAULT_RETRY_POLICY)).toEqual({ outcome: 'succeeded' });
    expect(outcomeOf(delivery(NOW), { outcome: 'failed', error: '550' }, NOW, DEFAULT_RETRY_POLICY)).toEqual({
      outcome: 'failed',
      error: '550',
    });
  });

  it('schedules a retry within the backoff, no sooner than the receiver asked', () => {
    const outcome = outcomeOf(delivery(NOW), { outcome: 'retry', error: '503', retryAfterMs: 30 * 60_000 }, NOW, DEFAULT_RETRY_POLICY);
    expect(outcome).toEqual({ outcome: 'retry', error: '503', runAt: new Date(NOW.getTime() + 30 * 60_000) });
  });

  it('is dead once the retry window is spent', () => {
    const queuedAt = new Date(NOW.getTime() - DEFAULT_RETRY_POLICY.windowMs);
    expect(outcomeOf(delivery(queuedAt, 40), { outcome: 'retry', error: 'timed out' }, NOW, DEFAULT_RETRY_POLICY)).toEqual({
      outcome: 'dead',
      error: 'timed out',
    });
  });
});

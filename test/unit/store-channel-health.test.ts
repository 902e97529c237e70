// Each channel's health on each backend: the backlog's counts, the last success and error, and since
// when it fails, kept where attempts are recorded, batch after batch.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RecordedAttempt, recordChannelHealth, summarise } from '../../src/storage/channel-health.js';
import type { AttemptOutcome, Store } from '../../src/storage/ports.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { queueInquiries } from '../helpers/store-fixtures.js';

const t0 = new Date('2026-11-27T10:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

/** Claims the due deliveries of `channel` at `when` and records `result` for each. */
async function attemptAll(store: Store, channel: string, when: Date, result: AttemptOutcome): Promise<void> {
  const claimed = await store.outbox.claimDue(when, new Map([[channel, 100]]), 60_000, 'worker');
  for (const { delivery } of claimed) {
    const outcome = result.outcome;
    const error = 'error' in result ? result.error : null;
    const recorded = await store.outbox.recordAttempt({
      deliveryId: delivery.id,
      owner: 'worker',
      attempts: delivery.attempts,
      attempt: { attemptedAt: when, outcome, error, durationMs: 0 },
      result,
    });
    expect(recorded).toBe(true);
  }
}

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('knows nothing of a channel never used', async () => {
    const { store } = await stores.open();
    expect(await store.outbox.health()).toEqual([]);
  });

  it('counts waiting, retrying and given-up deliveries, and keeps the last success and error and since when it fails', async () => {
    const { store } = await stores.open();
    await queueInquiries(store, ['INQ-AAAAA1', 'INQ-AAAAA2'], ['email', 'webhook'], t0);
    expect(await store.outbox.health()).toEqual([
      expect.objectContaining({ channel: 'email', waiting: 2, retrying: 0, failingSince: null, lastSuccessAt: null }),
      expect.objectContaining({ channel: 'webhook', waiting: 2, retrying: 0, failingSince: null, lastFailure: null }),
    ]);

    await attemptAll(store, 'email', at(0), { outcome: 'succeeded' });
    await attemptAll(store, 'webhook', at(0), { outcome: 'retry', error: 'HTTP 503', runAt: at(1) });
    await attemptAll(store, 'webhook', at(1), { outcome: 'retry', error: 'HTTP 502', runAt: at(2) });
    const [email, webhook] = await store.outbox.health();
    expect(email).toEqual({
      channel: 'email',
      waiting: 0,
      retrying: 0,
      dead: 0,
      failed: 0,
      lastGivenUpAt: null,
      lastSuccessAt: at(0),
      lastFailure: null,
      failingSince: null,
    });
    expect(webhook).toMatchObject({
      waiting: 0,
      retrying: 2,
      lastSuccessAt: null,
      lastFailure: { at: at(1), error: 'HTTP 502' },
      failingSince: at(0),
    });

    // One given up, one refused: both counted, the time of the one given up kept; still failing since the first failure.
    const [first] = await store.outbox.claimDue(at(2), new Map([['webhook', 1]]), 60_000, 'worker');
    await store.outbox.recordAttempt({
      deliveryId: first?.delivery.id ?? '',
      owner: 'worker',
      attempts: 2,
      attempt: { attemptedAt: at(2), outcome: 'dead', error: 'HTTP 500', durationMs: 0 },
      result: { outcome: 'dead', error: 'HTTP 500' },
    });
    await attemptAll(store, 'webhook', at(3), { outcome: 'failed', error: 'HTTP 410' });
    expect((await store.outbox.health())[1]).toMatchObject({
      retrying: 0,
      dead: 1,
      failed: 1,
      lastGivenUpAt: at(2),
      lastFailure: { at: at(3), error: 'HTTP 410' },
      failingSince: at(0),
    });

    // A success ends the failing; the error stays known with its time.
    await queueInquiries(store, ['INQ-AAAAA3'], ['webhook'], at(4));
    await attemptAll(store, 'webhook', at(5), { outcome: 'succeeded' });
    expect((await store.outbox.health())[1]).toMatchObject({ lastSuccessAt: at(5), failingSince: null, lastFailure: { at: at(3) } });
  });

  it('keeps the later success and error whatever order transactions record them in', async () => {
    const { store, opened } = await stores.open();
    const record = (attempts: RecordedAttempt[]) => recordChannelHealth(opened.db, attempts);
    const fail = (minutes: number): RecordedAttempt => ({
      channel: 'webhook',
      succeeded: false,
      at: at(minutes).getTime(),
      error: `e${minutes}`,
    });
    const succeed = (minutes: number): RecordedAttempt => ({ channel: 'webhook', succeeded: true, at: at(minutes).getTime(), error: null });
    await record([fail(3)]);
    await record([succeed(1), fail(2)]); // recorded late: older than the failure already kept
    expect((await store.outbox.health())[0]).toMatchObject({
      lastSuccessAt: at(1),
      lastFailure: { at: at(3), error: 'e3' },
      failingSince: at(2),
    });
    await record([fail(4)]);
    expect((await store.outbox.health())[0]).toMatchObject({ lastFailure: { at: at(4), error: 'e4' }, failingSince: at(2) });
    await record([succeed(5)]);
    expect((await store.outbox.health())[0]).toMatchObject({ lastSuccessAt: at(5), failingSince: null });
  });

  it('records in batches what one batch of them all would (attempts in time order, split anyhow)', async () => {
    const { store, opened } = await stores.open();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ succeeded: fc.boolean(), cut: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        async (drawn) => {
          const channel = `channel-${run++}`;
          const attempts = drawn.map(({ succeeded }, index) => ({
            channel,
            succeeded,
            at: at(index).getTime(),
            error: succeeded ? null : `e${index}`,
          }));
          let batch: RecordedAttempt[] = [];
          for (const [index, attempt] of attempts.entries()) {
            batch.push(attempt);
            if (drawn[index]?.cut || index === attempts.length - 1) {
              await recordChannelHealth(opened.db, batch);
              batch = [];
            }
          }
          const expected = summarise(channel, attempts);
          const health = (await store.outbox.health()).find((known) => known.channel === channel);
          expect(health?.lastSuccessAt?.getTime() ?? null).toBe(expected.last_success_at);
          expect(health?.lastFailure?.at.getTime() ?? null).toBe(expected.last_failure_at);
          expect(health?.lastFailure?.error ?? null).toBe(expected.last_error);
          expect(health?.failingSince?.getTime() ?? null).toBe(expected.failing_since);
        },
      ),
      { numRuns: 25 },
    );
  });
});

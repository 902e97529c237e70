// Recording attempts (src/delivery/recorder.ts) on a fake store: attempts finishing together share a
// transaction, a write is retried with a growing wait while the database is away (said once), and
// given up only when the worker stops.
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAttemptRecorder, RECORD_RETRY_FIRST_MS, RECORD_RETRY_MAX_MS } from '../../src/delivery/recorder.js';
import type { AttemptRecord, DeliveryRecord, Store, Tx } from '../../src/storage/ports.js';

afterEach(() => {
  vi.useRealTimers();
});

const delivery = (id: string, attempts = 0): DeliveryRecord => ({
  id,
  reference: 'INQ-000001',
  channel: 'email',
  status: 'pending',
  attempts,
  runAt: new Date(0),
  lastError: null,
  queuedAt: new Date(0),
  finishedAt: null,
});

const attempt = { attemptedAt: new Date(1_000), outcome: 'succeeded' as const, error: null, durationMs: 12 };

/** A store whose transactions fail while `down`, and whose outbox refuses the records of `refused` ids. */
function fakeStore() {
  const state = { down: false, running: true, refused: new Set<string>() };
  /** The records each transaction wrote. */
  const transactions: AttemptRecord[][] = [];
  const durability: (boolean | undefined)[] = [];
  /** When each transaction was tried (performance.now()). */
  const tries: number[] = [];
  const store: Pick<Store, 'outbox' | 'transaction'> = {
    async transaction(work, options) {
      tries.push(performance.now());
      durability.push(options?.durable);
      if (state.down) throw new Error('the database is down');
      return work({ __brand: 'Tx' } as Tx);
    },
    outbox: {
      async recordAttempts(records: readonly AttemptRecord[]) {
        transactions.push([...records]);
        return records.map((record) => !state.refused.has(record.deliveryId));
      },
    } as Partial<Store['outbox']> as Store['outbox'],
  };
  const lines: { msg: string; deliveryId?: string }[] = [];
  const recorded: string[] = [];
  const record = createAttemptRecorder({
    store,
    owner: 'worker-a',
    logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    isRunning: () => state.running,
    onRecorded: (id) => void recorded.push(id),
  });
  return { state, transactions, durability, tries, lines, recorded, record };
}

describe('attempt recorder', () => {
  it('writes attempts finishing together in one transaction, not durable, each with its owner and count', async () => {
    const { transactions, durability, recorded, record } = fakeStore();
    const results = await Promise.all([
      record(delivery('a'), attempt, { outcome: 'succeeded' }),
      record(delivery('b', 2), attempt, { outcome: 'failed', error: '550 no such user' }),
    ]);
    expect(results).toEqual([true, true]);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toEqual([
      { deliveryId: 'a', owner: 'worker-a', attempts: 0, attempt, result: { outcome: 'succeeded' } },
      { deliveryId: 'b', owner: 'worker-a', attempts: 2, attempt, result: { outcome: 'failed', error: '550 no such user' } },
    ]);
    expect(durability).toEqual([false]);
    expect(recorded).toEqual(['a', 'b']);
  });

  it('answers false for a record the outbox refused: the delivery is held by another worker now', async () => {
    const { state, recorded, record } = fakeStore();
    state.refused.add('a');
    expect(await record(delivery('a'), attempt, { outcome: 'succeeded' })).toBe(false);
    expect(recorded).toEqual(['a']); // written (refused) all the same: the claim under way must not send it
  });

  it('while the database is away, writes again after waits doubling up to a ceiling, and says so once', async () => {
    vi.useFakeTimers();
    const { state, tries, lines, record } = fakeStore();
    state.down = true;
    const recording = record(delivery('a'), attempt, { outcome: 'succeeded' });
    await vi.advanceTimersByTimeAsync(20_000);
    const waits = tries.slice(1).map((at, i) => Math.round(at - (tries[i] ?? 0)));
    const expected = [100, 200, 400, 800, 1_600, 2_000, 2_000];
    expect(RECORD_RETRY_FIRST_MS).toBe(expected[0]);
    expect(RECORD_RETRY_MAX_MS).toBe(2_000);
    // Each wait, plus the group commit's turn of the event loop (a fake millisecond at most).
    expect(waits.length).toBeGreaterThanOrEqual(expected.length);
    for (const [i, wait] of expected.entries()) {
      expect(waits[i]).toBeGreaterThanOrEqual(wait);
      expect(waits[i]).toBeLessThanOrEqual(wait + 1);
    }
    expect(lines).toEqual([
      expect.objectContaining({ deliveryId: 'a', msg: 'could not record a delivery attempt; retrying until the database answers' }),
    ]);
    state.down = false;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await recording).toBe(true);
  });

  it('gives up once the worker stops: the lease brings the delivery back after the restart', async () => {
    vi.useFakeTimers();
    const { state, recorded, record } = fakeStore();
    state.down = true;
    const recording = record(delivery('a'), attempt, { outcome: 'succeeded' });
    const outcome = recording.catch((error: Error) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    state.running = false;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await outcome).toEqual(new Error('the database is down'));
    expect(recorded).toEqual([]);
  });
});

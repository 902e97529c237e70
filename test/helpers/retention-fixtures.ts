// Set-up of the retention tests: inquiries of a verdict with deliveries, attempts and keys, finished
// (or not) at a given time, and the maintenance on a store with a clock the test moves.
import { pino } from 'pino';
import { parseRetention, type RetentionConfig } from '../../src/config/retention.js';
import { createMaintenance, type Deleted } from '../../src/maintenance.js';
import { createMetrics } from '../../src/metrics.js';
import type { AttemptOutcome, InquiryVerdict, Store } from '../../src/storage/ports.js';
import { inquiry } from './store-fixtures.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Stores inquiries of `verdict` received at `at`, each with a delivery per channel and an idempotency key made `keyAt`. */
export async function storeInquiries(
  store: Store,
  references: readonly string[],
  { verdict, at, channels = ['email'], keyAt = at }: { verdict: InquiryVerdict; at: Date; channels?: readonly string[]; keyAt?: Date },
): Promise<void> {
  await store.transaction(async (tx) => {
    await store.inquiries.insertMany(
      references.map((reference) => ({
        inquiry: inquiry(reference, at),
        fingerprint: `fp-${reference}`,
        judgement: { verdict, score: verdict === 'spam' ? 9 : 0, reasons: [] },
      })),
      tx,
    );
    await store.outbox.enqueue(references, channels, at, tx);
    await store.idempotency.insertMany(
      references.map((reference) => ({ key: `key-${reference}`, requestHash: 'h', reference, createdAt: keyAt, outcome: 'created' })),
      tx,
    );
  });
}

/** Attempts every due delivery at `at` with `outcome` (as a worker would record it); returns how many. */
export async function attemptDue(store: Store, at: Date, outcome: AttemptOutcome['outcome']): Promise<number> {
  const due = await store.outbox.claimDue(at, 100_000, 60_000, 'test-worker');
  if (due.length === 0) return 0;
  const result: AttemptOutcome =
    outcome === 'succeeded'
      ? { outcome }
      : outcome === 'retry'
        ? { outcome, error: 'connection refused', runAt: new Date(at.getTime() + 60_000) }
        : { outcome, error: 'mailbox unavailable' };
  const records = due.map(({ delivery }) => ({
    deliveryId: delivery.id,
    owner: 'test-worker',
    attempts: delivery.attempts,
    attempt: { attemptedAt: at, outcome, error: outcome === 'succeeded' ? null : 'mailbox unavailable', durationMs: 5 },
    result,
  }));
  await store.transaction((tx) => store.outbox.recordAttempts(records, tx));
  return due.length;
}

/** The maintenance on `store` with RETENTION_INBOX/RETENTION_SPAM as given, a clock the test sets, and its log lines and metrics kept. */
export function maintenanceOn(store: Store, env: { inbox?: string; spam?: string }, start: Date) {
  const clock = { now: start };
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const metrics = createMetrics(store.outbox, { channels: [] });
  const retention: RetentionConfig = parseRetention(env.inbox, env.spam);
  const maintenance = createMaintenance({ store, retention, now: () => clock.now, logger, onDeleted: metrics.deleted });
  return {
    maintenance,
    lines,
    metrics,
    /** Moves the clock on by `ms` and runs the maintenance. */
    async runAfter(ms: number): Promise<Deleted> {
      clock.now = new Date(clock.now.getTime() + ms);
      return maintenance.run();
    },
    get now() {
      return clock.now;
    },
  };
}

/** Which of `references` are still stored. */
export async function stillStored(store: Store, references: readonly string[]): Promise<string[]> {
  return [...(await store.inquiries.takenReferences(references))].sort();
}

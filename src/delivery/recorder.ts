// Recording attempts: attempts finishing together are written in one transaction, and while the
// database does not answer (a restart, a failover) a write is tried again until it succeeds, since
// the outcome of a message already sent must not be lost (it would be sent again after its lease).
import type { Logger } from 'pino';
import { GroupCommitter } from '../storage/group-commit.js';
import type { AttemptOutcome, AttemptRecord, DeliveryRecord, Store } from '../storage/ports.js';

/** While the database does not answer, an attempt's outcome is written again after these waits. */
export const RECORD_RETRY_FIRST_MS = 100;
export const RECORD_RETRY_MAX_MS = 2_000;

/**
 * Records an attempt while `owner` holds the delivery; false if another worker has taken it over
 * (the outcome is then theirs to record). Throws only once the worker stops: the lease then brings
 * the delivery back after the restart (delivery is at least once).
 */
export type RecordAttempt = (delivery: DeliveryRecord, attempt: AttemptRecord['attempt'], result: AttemptOutcome) => Promise<boolean>;

export interface RecorderOptions {
  readonly store: Pick<Store, 'outbox' | 'transaction'>;
  /** The worker whose lease the record needs (claimDue's owner). */
  readonly owner: string;
  readonly logger: Logger;
  /** Retries end once this is false. */
  readonly isRunning: () => boolean;
  /** Called with each delivery whose attempt the outbox has answered: written or refused. */
  readonly onRecorded: (deliveryId: string) => void;
}

export function createAttemptRecorder({ store, owner, logger, isRunning, onRecorded }: RecorderOptions): RecordAttempt {
  const { outbox } = store;
  // Not durable: an attempt record lost with the machine's power means the message may be sent again.
  const committer = new GroupCommitter<AttemptRecord, boolean>(store, (tx, writes) => outbox.recordAttempts(writes, tx), {
    durable: false,
  });
  return async (delivery, attempt, result) => {
    let waitMs = RECORD_RETRY_FIRST_MS;
    while (true) {
      try {
        const recorded = await committer.run({ deliveryId: delivery.id, owner, attempts: delivery.attempts, attempt, result });
        onRecorded(delivery.id);
        return recorded;
      } catch (error) {
        if (!isRunning()) throw error;
        if (waitMs === RECORD_RETRY_FIRST_MS) {
          logger.warn({ err: error, deliveryId: delivery.id }, 'could not record a delivery attempt; retrying until the database answers');
        }
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        waitMs = Math.min(waitMs * 2, RECORD_RETRY_MAX_MS);
      }
    }
  };
}

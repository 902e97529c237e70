// Group commit: units of work that arrive while a transaction is being prepared or committed share
// the next transaction, so one durable commit (one fsync) answers many requests. No caller's promise
// settles before the transaction holding its writes has committed.
import type { Store, Tx } from './store.js';

export type UnitOfWork<T> = (tx: Tx) => Promise<T>;

interface Pending {
  readonly work: UnitOfWork<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Settled {
  readonly job: Pending;
  readonly ok: boolean;
  readonly value: unknown;
}

/** Bounds one transaction so a burst cannot hold the write lock for long. */
export const MAX_BATCH_SIZE = 256;

export class GroupCommitter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly store: Pick<Store, 'transaction'>) {}

  /** Runs `work` in a shared transaction; resolves after that transaction has committed. */
  run<T>(work: UnitOfWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the requests already read in this turn of the event loop join the batch.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH_SIZE);
      await this.commitBatch(batch);
    }
    this.flushing = false;
  }

  private async commitBatch(batch: Pending[]): Promise<void> {
    let settled: Settled[];
    try {
      settled = await this.store.transaction(async (tx) => {
        const results: Settled[] = [];
        for (const job of batch) {
          try {
            results.push({ job, ok: true, value: await job.work(tx) });
          } catch (error) {
            // A unit that fails must not have written (units check before they write); its
            // rejection is delivered after the commit like everyone else's answer.
            results.push({ job, ok: false, value: error });
          }
        }
        return results;
      });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      // The shared transaction failed as a whole: try each unit alone, so one bad unit costs only
      // its own request.
      for (const job of batch) await this.commitBatch([job]);
      return;
    }
    for (const { job, ok, value } of settled) (ok ? job.resolve : job.reject)(value);
  }
}

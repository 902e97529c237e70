// Group commit: items that arrive while a transaction is being prepared or committed share the next
// transaction, and are processed together (set-based queries), so one durable commit (one fsync)
// answers many requests. No caller's promise settles before the transaction holding its writes has
// committed.
import type { Store, Tx } from './store.js';

/**
 * Processes a batch inside one transaction and returns one result per item, in order. An item that
 * must be refused gets an Error in its place and must not have been written; throwing fails the
 * whole batch.
 */
export type BatchProcessor<I, R> = (tx: Tx, items: readonly I[]) => Promise<(R | Error)[]>;

interface Pending<I, R> {
  readonly item: I;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

/** Bounds one transaction so a burst cannot hold the write lock for long. */
export const MAX_BATCH_SIZE = 256;

export class GroupCommitter<I, R> {
  private queue: Pending<I, R>[] = [];
  /** Transactions being prepared or committed right now. */
  private lanes = 0;

  constructor(
    private readonly store: Pick<Store, 'transaction'>,
    private readonly process: BatchProcessor<I, R>,
    private readonly options: {
      /** Durable (the default) unless the results may be lost with the machine's power (see inTransaction). */
      durable?: boolean;
      /**
       * Transactions that may run at once (1 by default). More only help where the database runs
       * them in parallel and each waits on a network round trip (PostgreSQL); the batch processor
       * must then make conflicting batches wait for one another (locks), as any two instances must.
       */
      concurrency?: number;
    } = {},
  ) {}

  /** Resolves with the item's result once the transaction that holds it has committed. */
  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.lanes < (this.options.concurrency ?? 1)) {
        this.lanes++;
        // Let the requests already read in this turn of the event loop join the batch.
        setImmediate(() => void this.flush());
      }
    });
  }

  /** One lane: commits batches from the queue until it is empty. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH_SIZE);
      await this.commitBatch(batch);
    }
    this.lanes--;
  }

  private async commitBatch(batch: Pending<I, R>[]): Promise<void> {
    let results: (R | Error)[];
    try {
      results = await this.store.transaction(
        (tx) =>
          this.process(
            tx,
            batch.map((pending) => pending.item),
          ),
        this.options,
      );
    } catch (error) {
      if (batch.length === 1 || !causedByAnItem(error)) {
        // The database itself failed (gone, timed out): every item fails now, not one by one.
        for (const pending of batch) pending.reject(error);
        return;
      }
      // One item broke the shared transaction (a constraint, a value, a deadlock): try each alone,
      // so that the bad one costs only its own request.
      for (const pending of batch) await this.commitBatch([pending]);
      return;
    }
    batch.forEach((pending, index) => {
      const result = results[index];
      if (result instanceof Error) pending.reject(result);
      else pending.resolve(result as R);
    });
  }
}

/**
 * Errors that one item of a batch can cause: on PostgreSQL the SQLSTATE classes 22 (data
 * exception), 23 (integrity constraint) and 40 (rollback: deadlock, serialization); on SQLite a
 * constraint or datatype mismatch. Anything else (a lost connection, a timeout, a full disk) would
 * fail each item alone just the same.
 */
export function causedByAnItem(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^(22|23|40)[0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|MISMATCH)/.test(code);
}

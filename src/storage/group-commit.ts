// Group commit: items arriving while a transaction is prepared or committed share the next one, and
// are processed together, so one durable commit answers many requests. No caller's promise settles
// before the transaction holding its writes has committed.
import type { Store, Tx } from './ports.js';

/**
 * Processes a batch inside one transaction and returns one result per item, in order. An item that
 * must be refused gets an Error in its place and must not have been written; throwing fails them all.
 */
export type BatchProcessor<I, R> = (tx: Tx, items: readonly I[]) => Promise<(R | Error)[]>;

interface Pending<I, R> {
  readonly item: I;
  /** When it was queued (performance.now()). */
  readonly since: number;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

/** Bounds one transaction so a burst cannot hold the write lock for long. */
export const MAX_BATCH_SIZE = 256;

/**
 * Where several transactions may run at once, a further one starts only once this many items wait
 * (or one waited EXTRA_LANE_AFTER_MS): a transaction's round trips and commit cost as much processor
 * as several items, and each one in flight adds to the contention (docs/benchmarks.md).
 */
export const EXTRA_LANE_AT = 8;

/**
 * …and fewer items do not wait longer than this for a busy lane: a slow transaction (one waiting
 * for another instance's lock, or a failed batch retried item by item) does not hold them up.
 */
export const EXTRA_LANE_AFTER_MS = 10;

export class GroupCommitter<I, R> {
  private queue: Pending<I, R>[] = [];
  /** Transactions being prepared or committed right now. */
  private lanes = 0;
  /** A lane has started and not yet taken its batch: items arriving meanwhile join that batch. */
  private starting = false;
  /** Starts a lane for the items waiting, if none has started by EXTRA_LANE_AFTER_MS. */
  private waitTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<Store, 'transaction'>,
    private readonly process: BatchProcessor<I, R>,
    private readonly options: {
      /** Durable (the default) unless the results may be lost with the machine's power (see inTransaction). */
      durable?: boolean;
      /**
       * Transactions that may run at once (1 by default): more help only where the database runs them
       * in parallel (PostgreSQL); conflicting batches then wait for one another (`lockNamesOf`).
       */
      concurrency?: number;
      /** What a batch decides about: its transaction locks these names from its start (Store.transaction). */
      lockNamesOf?: (items: readonly I[]) => string[];
      /** How long a batch waits for its locks (Store.transaction's default unless set). */
      lockTimeoutMs?: number;
      /** Items waiting before a lane beyond the first starts (EXTRA_LANE_AT by default). */
      extraLaneAt?: number;
      /** …or the wait after which one starts for fewer (EXTRA_LANE_AFTER_MS by default). */
      extraLaneAfterMs?: number;
    } = {},
  ) {}

  /** Resolves with the item's result once the transaction that holds it has committed. */
  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, since: performance.now(), resolve, reject });
      this.startLaneIfDue();
    });
  }

  /** Starts a lane for the waiting items: the first one always, a further one when it is worth it. */
  private startLaneIfDue(): void {
    const oldest = this.queue[0];
    if (this.starting || oldest === undefined) return;
    const canAddLane = this.lanes < (this.options.concurrency ?? 1);
    const enoughWaiting = this.queue.length >= (this.options.extraLaneAt ?? EXTRA_LANE_AT);
    const waitLeftMs = (this.options.extraLaneAfterMs ?? EXTRA_LANE_AFTER_MS) - (performance.now() - oldest.since);
    if (this.lanes === 0 || (canAddLane && (enoughWaiting || waitLeftMs <= 0))) {
      this.lanes++;
      this.starting = true;
      // Let the requests already read in this turn of the event loop join the batch.
      setImmediate(() => {
        this.starting = false;
        void this.flush();
      });
    } else if (canAddLane && this.waitTimer === undefined) {
      this.waitTimer = setTimeout(() => {
        this.waitTimer = undefined;
        this.startLaneIfDue();
      }, waitLeftMs);
    }
  }

  /** One lane: commits batches from the queue until it is empty. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH_SIZE);
      // More than a batch may have arrived at once: they need not wait for this one.
      this.startLaneIfDue();
      await this.commitBatch(batch);
    }
    this.lanes--;
  }

  private async commitBatch(batch: Pending<I, R>[]): Promise<void> {
    let results: (R | Error)[];
    const items = batch.map((pending) => pending.item);
    try {
      results = await this.store.transaction((tx) => this.process(tx, items), {
        ...(this.options.durable !== undefined && { durable: this.options.durable }),
        ...(this.options.lockNamesOf && { lock: this.options.lockNamesOf(items) }),
        ...(this.options.lockTimeoutMs !== undefined && { lockTimeoutMs: this.options.lockTimeoutMs }),
      });
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
 * Errors one item can cause: PostgreSQL SQLSTATE classes 22 (data), 23 (constraint), 40 (deadlock,
 * serialization) and 55P03 (a lock held by a stalled transaction elsewhere); SQLite constraint or
 * type mismatch. Anything else (a lost connection, a full disk) would fail each item alone too.
 */
export function causedByAnItem(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^(22|23|40)[0-9A-Z]{3}$/.test(code) || code === '55P03' || /^SQLITE_(CONSTRAINT|MISMATCH)/.test(code);
}

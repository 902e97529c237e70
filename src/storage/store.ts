// The store (ports.ts) on an open database: its parts composed, and transactions whose commit wakes
// whoever waits for their work. The domain never sees Kysely, only the opaque `Tx`.
import { createAlertStore } from './alert-store.js';
import { createAuthStore } from './auth-store.js';
import { createDigestStore } from './digest-store.js';
import { executorOn } from './executor.js';
import type { OpenDatabase } from './handle.js';
import { createIdempotencyStore } from './idempotency-store.js';
import { createInquiryStore } from './inquiry-store.js';
import { createIntakeStore } from './intake-store.js';
import { createOAuthStore } from './oauth-store.js';
import { createOutbox } from './outbox.js';
import type { Store, Tx } from './ports.js';
import { createProofStore } from './proof-store.js';
import { createRetentionStore } from './retention-store.js';
import { inTransaction } from './transaction.js';

/** PostgreSQL runs write transactions in parallel, each overlapping the others' round trips and commits. */
const POSTGRES_PARALLEL_WRITES = 4;

export function createStore({ db, dialect, ping, backup }: OpenDatabase): Store {
  const q = executorOn(db);
  const inquiries = createInquiryStore(db, q, dialect);
  const idempotency = createIdempotencyStore(db, q, dialect);
  const outbox = createOutbox(db, dialect, q);
  const intake = createIntakeStore(q, dialect, { inquiries, idempotency, outbox });
  /** What to run after each open transaction commits, by transaction (while its work runs). */
  const onCommit = new WeakMap<object, (() => void)[]>();

  return {
    dialect,
    parallelWrites: dialect === 'postgres' ? POSTGRES_PARALLEL_WRITES : 1,
    auth: createAuthStore(db),
    oauth: createOAuthStore(db),
    inquiries,
    idempotency,
    intake,
    outbox,
    digests: createDigestStore(q),
    alerts: createAlertStore(q),
    retention: createRetentionStore(db, dialect),
    proofs: createProofStore(q),
    async transaction(work, options) {
      const callbacks: (() => void)[] = [];
      const result = await inTransaction(
        db,
        dialect,
        async (trx) => {
          onCommit.set(trx, callbacks);
          try {
            return await work(trx as unknown as Tx);
          } finally {
            onCommit.delete(trx);
          }
        },
        options,
      );
      for (const callback of callbacks) callback();
      return result;
    },
    afterCommit(tx, callback) {
      const callbacks = onCommit.get(tx);
      if (callbacks === undefined) throw new Error('afterCommit takes a transaction of store.transaction, while it is open');
      callbacks.push(callback);
    },
    ping,
    ...(backup && { backup }),
    close: () => db.destroy(),
  };
}

// The maintenance every instance runs at start and then hourly: forgets expired idempotency keys and proofs of work,
// and deletes what is no longer kept (docs/operations.md, "Personal data"): inquiries past
// RETENTION_INBOX or RETENTION_SPAM, finished service mail, and agent-auth records that have served.
import type { Logger } from 'pino';
import { REFRESH_TOKEN_TTL_MS } from './auth/oauth-tokens.js';
import { IDENTITY_ASSERTION_TTL_SECONDS } from './auth/service.js';
import { type RetentionConfig, retentionCutoff } from './config/retention.js';
import { SESSION_IDLE_MS } from './inbox/access.js';
import { IDEMPOTENCY_KEY_TTL_MS } from './inquiries/service.js';
import { IN_PROCESS, inChunks } from './storage/bulk.js';
import type { RetentionBatch, RetentionKind, Store } from './storage/ports.js';
import type { InboxStore } from './storage/ports-inbox.js';

export const MAINTENANCE_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * How long agent-auth records outlive their use: a late caller still gets the precise refusal (410
 * claim_expired rather than 401 unknown claim_token), and an operator can still look them up.
 */
export const AUTH_GRACE_MS = 7 * DAY_MS;
/** How long a service mail (a claim code) is kept once sent or given up: its last error says why a code never arrived. */
export const SERVICE_MAIL_KEPT_MS = DAY_MS;
/** Inquiries per transaction: each takes its deliveries, their attempts and its keys along. */
export const INQUIRIES_PER_BATCH = 100;

export type Deleted = Partial<Record<RetentionKind, number>>;

export interface MaintenanceDeps {
  readonly store: Pick<Store, 'idempotency' | 'retention' | 'proofs'>;
  readonly retention: RetentionConfig;
  /** The inbox's sign-in links and sessions: those expired are deleted. */
  readonly inbox?: Pick<InboxStore, 'purgeExpired' | 'compactSearch'>;
  readonly now: () => Date;
  readonly logger: Pick<Logger, 'info' | 'debug' | 'warn'>;
  /** Told what each run deleted (the metrics count it). */
  readonly onDeleted?: (deleted: Deleted) => void;
}

export type Maintenance = ReturnType<typeof createMaintenance>;

export function createMaintenance({ store, inbox, retention, now, logger, onDeleted }: MaintenanceDeps) {
  let running: Promise<Deleted> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  /** Every batch of `step` (each its own short transaction, a turn of the event loop between them), its deletions added up in `deleted`. */
  const drain = (deleted: Deleted, rows: number, step: (limit: number) => Promise<RetentionBatch>) =>
    inChunks({ rows, pauseMs: IN_PROCESS.pauseMs }, async (limit) => {
      if (stopped) return { seen: 0, changed: 0 };
      const batch = await step(limit);
      for (const [kind, count] of Object.entries(batch.deleted) as [RetentionKind, number][]) {
        if (count > 0) deleted[kind] = (deleted[kind] ?? 0) + count;
      }
      return { seen: batch.seen, changed: 0 };
    });

  async function purge(): Promise<Deleted> {
    const at = now();
    const before = (ms: number) => new Date(at.getTime() - ms);
    const deleted: Deleted = {};
    const keys = await store.idempotency.deleteOlderThan(before(IDEMPOTENCY_KEY_TTL_MS));
    if (keys > 0) deleted.idempotencyKeys = keys;
    for (const verdict of ['spam', 'inbox'] as const) {
      const period = retention[verdict];
      if (period === null) continue;
      const cutoff = retentionCutoff(period, at);
      await drain(deleted, INQUIRIES_PER_BATCH, (limit) => store.retention.deleteInquiries(verdict, cutoff, limit));
    }
    await drain(deleted, IN_PROCESS.rows, (limit) => store.retention.deleteFinishedMessages(before(SERVICE_MAIL_KEPT_MS), limit));
    // An identity assertion lasts IDENTITY_ASSERTION_TTL_SECONDS: past it (and the grace), nothing a client was given still works.
    const assertionsExpired = before(IDENTITY_ASSERTION_TTL_SECONDS * 1000 + AUTH_GRACE_MS);
    const cutoffs = {
      revokedBefore: assertionsExpired,
      pendingClaimExpiredBefore: before(AUTH_GRACE_MS),
      unclaimedAnonymousBefore: assertionsExpired,
    };
    await drain(deleted, IN_PROCESS.rows, (limit) => store.retention.deleteSpentClients(cutoffs, limit));
    await drain(deleted, IN_PROCESS.rows, (limit) => store.retention.deleteExpiredClaims(before(AUTH_GRACE_MS), limit));
    await drain(deleted, IN_PROCESS.rows, (limit) => store.retention.deleteExpiredTokenRecords(at, limit));
    // Sign-ins (OAuth): a registration never used within a day is dropped; one used lives while its refresh tokens could.
    const signIns = {
      expiredBefore: before(AUTH_GRACE_MS),
      unusedClientBefore: before(DAY_MS),
      idleClientBefore: before(REFRESH_TOKEN_TTL_MS + AUTH_GRACE_MS),
    };
    await drain(deleted, IN_PROCESS.rows, (limit) => store.retention.deleteSpentSignIns(signIns, limit));
    await inbox?.purgeExpired(at, before(SESSION_IDLE_MS)); // links past their 15 minutes, sessions ended
    if ((deleted.inquiries ?? 0) > 0) await inbox?.compactSearch(); // no word of a deleted inquiry stays in the search index
    await store.proofs.purgeExpired(at); // proofs of work whose challenge expired: a replay of them is stale anyway
    return deleted;
  }

  /** One run; asked for while one goes on, the same run. Resolves with the rows it deleted, by kind. */
  function run(): Promise<Deleted> {
    running ??= purge()
      .then((deleted) => {
        // Counts by kind only: nothing of what the rows held.
        if (Object.values(deleted).some((count) => count > 0)) logger.info({ deleted }, 'maintenance deleted what is no longer kept');
        else logger.debug('maintenance found nothing to delete');
        onDeleted?.(deleted);
        return deleted;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const tick = () => {
    run().catch((error: unknown) => {
      if (!stopped) logger.warn({ err: error }, 'maintenance failed; it runs again within the hour');
    });
  };

  return {
    run,
    /** Runs now (an instance restarted more often than the interval would otherwise never run it) and then hourly. */
    start() {
      tick();
      timer = setInterval(tick, MAINTENANCE_INTERVAL_MS).unref();
    },
    /** Ends the hourly runs; a run going on stops after its current batch. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}

// The quarantine digest on its daily schedule (SPAM_DIGEST, docs/spam.md): each instance looks every
// minute whether the day's digest is due and not yet taken; the database lets one instance take it.

import type { Logger } from 'pino';
import { type PeriodicCheck, periodicCheck } from '../periodic.js';
import type { Store } from '../storage/ports.js';
import { type DigestOutcome, type DigestRoute, digestPeriod, queueDigest } from './digest.js';

export interface DigestScheduleOptions {
  readonly store: Pick<Store, 'transaction' | 'digests' | 'outbox'>;
  /** Where the digest goes; null (no channel configured) sends none. */
  readonly route: DigestRoute | null;
  /** The UTC hour each day's digest is due from; null (SPAM_DIGEST=off) sends none. */
  readonly hourUtc: number | null;
  readonly logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  readonly now?: () => Date;
  /** How often to look (a minute: the digest goes out within a minute of its hour). */
  readonly checkIntervalMs?: number;
  /** Called once a digest is queued (committed): wakes the worker, counts it. */
  readonly onQueued?: (outcome: Extract<DigestOutcome, { kind: 'queued' }>) => void;
}

/** Its start does nothing when the digest is off or has nowhere to go. */
export type DigestSchedule = PeriodicCheck;

const DEFAULT_CHECK_INTERVAL_MS = 60_000;

export function createDigestSchedule(options: DigestScheduleOptions): DigestSchedule {
  const { store, route, hourUtc, logger, onQueued } = options;
  const now = options.now ?? (() => new Date());
  /** The last period this instance saw taken: nothing to ask the database until the next. */
  let done: string | null = null;
  let failing = false;

  const look = async (): Promise<void> => {
    if (route === null || hourUtc === null) return;
    const at = now();
    const period = digestPeriod(at, hourUtc);
    if (period === done) return;
    try {
      const outcome = await queueDigest(store, route, { period, now: at });
      done = period;
      if (failing) logger.info('the quarantine digest can be taken again');
      failing = false;
      if (outcome.kind === 'queued') {
        // Counts and ids only: the digest's names and addresses stay out of the log.
        logger.info({ digest: outcome.id, period, channel: outcome.channel, inquiries: outcome.total }, 'quarantine digest queued');
        onQueued?.(outcome);
      } else logger.debug({ period, outcome: outcome.kind }, 'no quarantine digest to queue');
    } catch (error) {
      if (!failing) logger.warn({ err: error, period }, 'could not take the quarantine digest; will try again every minute');
      failing = true;
    }
  };

  return periodicCheck(look, options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS, route !== null && hourUtc !== null);
}

// The quarantine digest on its daily schedule (SPAM_DIGEST, docs/spam.md): each instance looks every
// minute whether the day's digest is due and not yet taken; the database lets one instance take it.
import type { Logger } from 'pino';
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

export interface DigestSchedule {
  /** Looks at once, then every interval. Does nothing when the digest is off or has nowhere to go. */
  start(): void;
  /** Looks once now (the interval's work); resolves when done, never rejects. */
  check(): Promise<void>;
  /** Stops looking and waits for a look under way. */
  stop(): Promise<void>;
}

const DEFAULT_CHECK_INTERVAL_MS = 60_000;

export function createDigestSchedule(options: DigestScheduleOptions): DigestSchedule {
  const { store, route, hourUtc, logger, onQueued } = options;
  const now = options.now ?? (() => new Date());
  /** The last period this instance saw taken: nothing to ask the database until the next. */
  let done: string | null = null;
  let failing = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;

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

  const check = (): Promise<void> => {
    running ??= look().finally(() => {
      running = null;
    });
    return running;
  };

  return {
    start() {
      if (route === null || hourUtc === null || timer !== undefined) return;
      void check();
      timer = setInterval(() => void check(), options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS).unref();
    },
    check,
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}

// The outbox worker: claims due deliveries, hands each to its channel, records every attempt, and
// schedules retries. Runs inside the service process; after a crash it finds the pending rows again
// on the next start. Composed of the parts beside it: claiming, pacing, leases, slots, recorder.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DueDelivery, Store } from '../storage/ports.js';
import { createAttempts } from './attempt.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './backoff.js';
import type { Channel } from './channel.js';
import { ClaimLoop, warnOfOtherChannels } from './claiming.js';
import { HeldLeases } from './leases.js';
import { createLifecycle, type Lifecycle } from './lifecycle.js';
import { ClaimPacing, DeliveryPacer } from './pacing.js';
import { createAttemptRecorder } from './recorder.js';
import { ChannelSlots } from './slots.js';

export interface WorkerOptions {
  readonly store: Pick<Store, 'outbox' | 'transaction' | 'inquiries'>;
  readonly channels: readonly Channel[];
  readonly logger: Logger;
  readonly retry?: RetryPolicy;
  /**
   * Deliveries in flight at once, per channel: a channel whose receiver hangs holds its own places,
   * never another channel's (its deliveries are claimed apart).
   */
  readonly concurrency?: number;
  /**
   * How long a claim is held before another worker may take the delivery over, unless renewed:
   * this worker renews it while the delivery is in flight.
   */
  readonly leaseMs?: number;
  /** How often to look for due retries when nothing wakes the worker. */
  readonly pollIntervalMs?: number;
  /** Release every lease on start: right for a store only this process uses (SQLite). */
  readonly releaseLeasesOnStart?: boolean;
  readonly now?: () => Date;
  /** Called after each successful delivery with the seconds since it was queued (metrics). */
  readonly onDelivered?: (channel: string, seconds: number) => void;
  /** How delivery gives way to a burst of intake (src/delivery/pacing.ts; the default pace); null never paces. */
  readonly pacer?: DeliveryPacer | null;
}

const DEFAULT_CONCURRENCY = 32;
/**
 * How long a crashed or hung worker's claims wait before another worker takes them over. Leases in
 * flight are renewed (leases.ts), so it need not cover an attempt waiting for a connection.
 */
const DEFAULT_LEASE_MS = 2 * 60 * 1000;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Shutdown ends within its deadline (docs/operations.md); sends get this long to finish. */
const DEFAULT_STOP_GRACE_MS = 5_000;

export class DeliveryWorker {
  /** Whose leases this worker's claims take, and whose attempts it records (claimDue's owner). */
  readonly id = randomUUID();
  private readonly pacer: DeliveryPacer | null;
  private readonly claims: ClaimLoop;
  private readonly lifecycle: Lifecycle;

  constructor(options: WorkerOptions) {
    const { store, logger } = options;
    const { outbox } = store;
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const now = options.now ?? (() => new Date());
    // This closure and `onRecorded` below use this.lifecycle and this.claims, set further down: none
    // of the parts calls them before the constructor has returned.
    const isRunning = () => this.lifecycle.isRunning();
    this.pacer = options.pacer === undefined ? new DeliveryPacer() : options.pacer;
    const channels = new Map(options.channels.map((channel) => [channel.name, channel]));
    const slots = new ChannelSlots(channels, options.concurrency ?? DEFAULT_CONCURRENCY);
    const leases = new HeldLeases({ leaseMs, now, logger, renew: (ids, until) => outbox.renewLeases(ids, this.id, until) });
    const attempt = createAttempts({
      channels,
      sendSlots: (channel) => slots.sendSlots(channel),
      isRunning,
      stillHeld: (id) => leases.stillHeld(id),
      giveBack: (id) => outbox.releaseClaims([id], this.id),
      record: createAttemptRecorder({ store, owner: this.id, logger, isRunning, onRecorded: (id) => this.claims.noteRecorded(id) }),
      retry: options.retry ?? DEFAULT_RETRY_POLICY,
      now,
      logger,
      ...(options.onDelivered && { onDelivered: options.onDelivered }),
    });
    /** The attempts under way, which a stop waits for. */
    const attempts = new Set<Promise<void>>();
    const launch = (item: DueDelivery, claimedAt: number) => {
      const { id, channel } = item.delivery;
      leases.hold(id, claimedAt);
      slots.occupy(channel);
      const work = attempt(item);
      attempts.add(work);
      void work.finally(() => {
        attempts.delete(work);
        leases.release(id);
        slots.vacate(channel);
        this.wake();
      });
    };
    this.claims = new ClaimLoop({
      isRunning,
      openChannels: () => slots.open(),
      pacing: new ClaimPacing({
        pacer: this.pacer,
        countReceivedSince: (since, limit) => store.inquiries.countReceivedSince(since, limit),
        now,
      }),
      claimDue: (capacity) => outbox.claimDue(now(), capacity, leaseMs, this.id),
      leases,
      launch,
      giveBack: (ids) => outbox.releaseClaims(ids, this.id),
      logger,
      pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    });
    this.lifecycle = createLifecycle({
      ...(options.releaseLeasesOnStart && { prepare: () => outbox.releaseLeases() }),
      begin: () => {
        leases.startRenewing();
        this.wake();
        void warnOfOtherChannels(outbox, channels, logger);
      },
      // Sends waiting for a connection of their channel do not start now: they are given back at
      // once, rather than sent during the grace and perhaps cut off by the exit (then sent again).
      halt: () => {
        const claiming = this.claims.halt();
        slots.abandonWaiting();
        return (async () => {
          await claiming;
          while (attempts.size > 0) await Promise.allSettled([...attempts]);
        })();
      },
      // Renewed until now, so the grace cannot let a lease lapse; a send still running is left to its lease.
      end: (finished) => {
        leases.stopRenewing();
        if (!finished)
          logger.warn({ inFlight: attempts.size }, 'stopping with deliveries still in flight; they are retried after the restart');
      },
    });
  }

  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** An inquiry's deliveries were committed: send them (and count the inquiry towards the pace). */
  enqueued(): void {
    this.pacer?.noteIntake();
    this.wake();
  }

  /** Look for due deliveries now. */
  wake(): void {
    this.claims.wake();
  }

  /**
   * Stops claiming, gives back the deliveries claimed but not yet being sent, and waits for the
   * sends already started for at most `graceMs`. One still running is left to its lease and tried
   * again after the restart (delivery is at least once). Asked again, it waits for the same stop.
   */
  stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<void> {
    return this.lifecycle.stop(graceMs);
  }
}

// The outbox worker: claims due deliveries, hands each to its channel, records every attempt, and
// schedules retries. Runs inside the service process; after a crash it simply finds the pending
// rows again on the next start.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { settlesWithin } from '../deadline.js';
import { GroupCommitter } from '../storage/group-commit.js';
import type { AttemptOutcome, AttemptRecord, DeliveryRecord, DueDelivery, Store } from '../storage/ports.js';
import { DEFAULT_RETRY_POLICY, nextAttemptAt, type RetryPolicy } from './backoff.js';
import type { Channel, SendResult } from './channel.js';
import { DeliveryPacer, PACE_WINDOW_MS } from './pacing.js';

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
 * How long a crashed or hung worker's claims wait before another worker takes them over. A live
 * worker renews the leases of the deliveries it has in flight (see renewLeases), so the lease need
 * not cover an attempt: with 32 deliveries claimed together and 4 SMTP connections, the last of
 * them waits for about eight sends before its own even starts.
 */
const DEFAULT_LEASE_MS = 2 * 60 * 1000;
/** Leases in flight are renewed this many times a lease, so one late renewal does not let one lapse. */
const RENEWALS_PER_LEASE = 3;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Shutdown must end within 10 s (CONTRACT.md); sends get this long to finish. */
const DEFAULT_STOP_GRACE_MS = 5_000;
/** While the database does not answer, an attempt's outcome is written again after these waits. */
const RECORD_RETRY_FIRST_MS = 100;
const RECORD_RETRY_MAX_MS = 2_000;

export class DeliveryWorker {
  private readonly channels: Map<string, Channel>;
  private readonly retry: RetryPolicy;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly now: () => Date;
  private readonly inFlight = new Set<Promise<void>>();
  /** How many deliveries of each channel are in flight. */
  private readonly inFlightByChannel = new Map<string, number>();
  /** Where the pacer's allowance is shared out from next (fairness between channels). */
  private shareStart = 0;
  /**
   * Deliveries this worker is sending or recording: their leases are renewed (renewLeases). A claim
   * of this worker's that finds one of them again (its lease ran out while the database was away)
   * has only renewed the lease, which stays this worker's: the send is not started a second time.
   */
  private readonly inFlightIds = new Set<string>();
  /**
   * By when (performance.now(), which runs on while the process is frozen) this worker's lease on
   * each delivery in flight runs out, as far as it knows: set by the claim, moved on by each renewal
   * that succeeds.
   */
  private readonly heldUntil = new Map<string, number>();
  /** The sends each channel may run at once (Channel.concurrency); the others wait here. */
  private readonly channelSlots = new Map<string, Slots>();
  /**
   * Deliveries whose attempt was recorded while a claim was running. That claim may have leased
   * one of them again just before the record committed (its lease ran out while the database was
   * away), and must not send it a second time.
   */
  private readonly recordedDuringClaim = new Set<string>();
  /** Whose leases this worker's claims take, and whose attempts it records (claimDue's owner). */
  readonly id = randomUUID();
  private pumping: Promise<void> | undefined;
  /** The stop under way, or done (until the next start). */
  private stopping: Promise<void> | undefined;
  /** How many times stop() was called: a start that sees it change while it waits does not start. */
  private stopsAsked = 0;
  private running = false;
  private claiming = false;
  private wakeAgain = false;
  /** The last claim failed (the database is away); logged once until a claim succeeds again. */
  private outboxUnreadable = false;
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  /** The last renewal failed; logged once until one succeeds again. */
  private renewalFailing = false;
  private readonly pacer: DeliveryPacer | null;
  /** Paced, the timer wakes the worker when the next chunk is due; other wake-ups can wait for it. */
  private waitingForPace = false;
  /** The last claim got all it asked for: more may be due, which a burst elsewhere may have to hold back. */
  private backlog = false;
  /** Attempts finishing together are recorded in one transaction. */
  private readonly recorder: GroupCommitter<AttemptRecord, boolean>;

  constructor(private readonly options: WorkerOptions) {
    this.channels = new Map(options.channels.map((channel) => [channel.name, channel]));
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.now = options.now ?? (() => new Date());
    this.pacer = options.pacer === undefined ? new DeliveryPacer() : options.pacer;
    const { outbox } = options.store;
    // Not durable: an attempt record lost with the machine's power means the message may be sent again.
    this.recorder = new GroupCommitter(options.store, (tx, writes) => outbox.recordAttempts(writes, tx), { durable: false });
  }

  async start(): Promise<void> {
    if (this.running) return;
    // A stop under way ends first (its timers are its own to clear); a stop asked for while this
    // start waits wins: the worker stays stopped.
    const stopsBefore = this.stopsAsked;
    await this.stopping;
    if (this.stopsAsked !== stopsBefore) return;
    this.stopping = undefined;
    if (this.options.releaseLeasesOnStart) await this.options.store.outbox.releaseLeases();
    if (this.stopsAsked !== stopsBefore || this.running) return;
    this.running = true;
    clearInterval(this.renewTimer);
    this.renewTimer = setInterval(() => void this.renewLeases(), this.leaseMs / RENEWALS_PER_LEASE).unref();
    this.wake();
    void this.warnOfOtherChannels();
  }

  /**
   * Deliveries of a channel this process is not configured with (a webhook removed from the
   * configuration) are left pending for a process that has it: said once at start, so that they
   * are not forgotten. A count that cannot be read is no reason to say anything.
   */
  private async warnOfOtherChannels(): Promise<void> {
    const counts = await this.options.store.outbox.countByChannelAndStatus().catch(() => []);
    for (const { channel, status, count } of counts) {
      if (status !== 'pending' || count === 0 || this.channels.has(channel)) continue;
      this.options.logger.warn(
        { channel, pending: count },
        `${count} ${channel} deliveries are pending, but this instance has no ${channel} channel configured: they wait for one that has`,
      );
    }
  }

  /** An inquiry's deliveries were committed: send them (and count the inquiry towards the pace). */
  enqueued(): void {
    this.pacer?.noteIntake();
    this.wake();
  }

  /** Look for due deliveries now. */
  wake(): void {
    if (!this.running || this.waitingForPace) return;
    if (this.claiming) {
      this.wakeAgain = true;
      return;
    }
    this.pumping = this.pump();
  }

  /**
   * Stops claiming, gives back the deliveries claimed but not yet being sent, and waits for the
   * sends already started, for at most `graceMs` (so that shutdown stays within its deadline). One
   * still running then is left to its lease: it is tried again after the restart (delivery is at
   * least once).
   */
  stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<void> {
    this.stopsAsked++;
    // Asked again while stopping (shutdown stops the worker beside the HTTP drain, then closes the
    // services), it waits for the same stop, not for a second grace.
    this.stopping ??= this.stopNow(graceMs);
    return this.stopping;
  }

  private async stopNow(graceMs: number): Promise<void> {
    this.running = false;
    this.waitingForPace = false;
    clearTimeout(this.timer);
    // Sends not yet started (waiting for a connection of their channel) are not started now: they
    // are given back below, at once, for any worker to claim, instead of being sent during the
    // grace and perhaps cut off by the exit (sent, but not recorded, so sent again).
    for (const slots of this.channelSlots.values()) slots.abandonWaiting();
    const drained = (async () => {
      await this.pumping;
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    })();
    const finished = await settlesWithin(drained, graceMs);
    // Renewed until now, so the grace cannot let a lease lapse; from here a send still running is
    // left to its lease.
    clearInterval(this.renewTimer);
    if (!finished)
      this.options.logger.warn(
        { inFlight: this.inFlight.size },
        'stopping with deliveries still in flight; they are retried after the restart',
      );
  }

  private async pump(): Promise<void> {
    this.claiming = true;
    clearTimeout(this.timer);
    let nextLookMs = this.pollIntervalMs;
    try {
      do {
        this.wakeAgain = false;
        // Claim in chunks (each claim is a committed write): for a channel once half its places are free.
        const open = [...this.channels.keys()].flatMap((name) => {
          const free = this.concurrency - (this.inFlightByChannel.get(name) ?? 0);
          return free >= Math.ceil(this.concurrency / 2) ? [{ name, free }] : [];
        });
        if (open.length === 0) break;
        if (this.backlog && this.pacer?.sharedCountDue()) {
          await this.countSharedIntake(this.pacer);
          if (!this.running) break; // stopped meanwhile: claim nothing more
        }
        const capacity = this.shareOut(open, this.pacer?.allowance() ?? Number.POSITIVE_INFINITY);
        if (capacity.size === 0) {
          this.waitingForPace = true;
          nextLookMs = this.pacer?.nextChunkInMs() ?? nextLookMs;
          break;
        }
        this.recordedDuringClaim.clear();
        const claimedAt = performance.now();
        const due = await this.options.store.outbox.claimDue(this.now(), capacity, this.leaseMs, this.id);
        const unused: string[] = [];
        let started = 0;
        for (const item of due) {
          const id = item.delivery.id;
          if (this.inFlightIds.has(id)) {
            this.heldUntil.set(id, claimedAt + this.leaseMs); // its lease, renewed by this claim
            continue;
          }
          if (this.running && !this.recordedDuringClaim.has(id)) {
            this.heldUntil.set(id, claimedAt + this.leaseMs);
            this.launch(item);
            started++;
          } else unused.push(id);
        }
        this.pacer?.spend(started);
        // What was claimed but not started (stopping, or already recorded) is given back at once,
        // not left waiting for its lease.
        if (unused.length > 0) await this.options.store.outbox.releaseClaims(unused, this.id);
        // A channel that got all it asked for may have more due.
        this.backlog = [...capacity].some(([name, count]) => due.filter((item) => item.delivery.channel === name).length === count);
        if (this.backlog) this.wakeAgain = true;
        if (this.outboxUnreadable) {
          this.outboxUnreadable = false;
          this.options.logger.info('delivery worker reads the outbox again');
        }
      } while (this.wakeAgain && this.running);
    } catch (error) {
      // Once per outage, not once per poll.
      if (!this.outboxUnreadable) this.options.logger.error({ err: error }, 'delivery worker could not read the outbox; will retry');
      this.outboxUnreadable = true;
    } finally {
      this.claiming = false;
    }
    if (this.running)
      this.timer = setTimeout(() => {
        this.waitingForPace = false;
        this.wake();
      }, nextLookMs).unref();
  }

  /**
   * How many deliveries to claim for each open channel: its free places, and of the pacer's
   * allowance (while intake is bursting) an even share, the odd ones going round the channels.
   */
  private shareOut(open: readonly { name: string; free: number }[], allowance: number): Map<string, number> {
    const shares = new Map<string, number>();
    const each = Math.floor(allowance / open.length);
    const extra = allowance - each * open.length;
    for (let i = 0; i < open.length; i++) {
      const { name, free } = open[(this.shareStart + i) % open.length] as { name: string; free: number };
      const count = Math.min(free, each + (i < extra ? 1 : 0));
      if (count > 0) shares.set(name, count);
    }
    this.shareStart = (this.shareStart + 1) % open.length;
    return shares;
  }

  /**
   * Tells the pacer how many inquiries all instances received in the last window. The count is a
   * hint: where it fails, delivery carries on unpaced (the claim that follows reports a database
   * that is away).
   */
  private async countSharedIntake(pacer: DeliveryPacer): Promise<void> {
    const since = new Date(this.now().getTime() - PACE_WINDOW_MS);
    let count = 0;
    try {
      count = await this.options.store.inquiries.countReceivedSince(since, pacer.sharedCountLimit());
    } catch {
      // counted as none
    }
    pacer.noteSharedIntake(count);
  }

  /**
   * Extends the leases of the deliveries this worker is sending or recording, so that none is
   * taken over while it waits for an SMTP connection or a slow receiver: another instance would
   * send it again, and this one's record would then be refused (the attempt would go unrecorded).
   * Fenced by locked_by: a lease already taken over (this worker was cut off from the database for
   * longer than the lease) stays the other's. A worker that dies or hangs stops renewing, and its
   * claims come back after the lease. While the database is away, renewals fail like claims do.
   */
  private async renewLeases(): Promise<void> {
    if (this.renewing || this.inFlightIds.size === 0) return;
    this.renewing = true;
    try {
      const until = new Date(this.now().getTime() + this.leaseMs);
      const renewedAt = performance.now();
      const ids = [...this.inFlightIds];
      // Only the leases renewed move on. One not renewed keeps the end its claim or last renewal
      // gave it: after an outage longer than the lease, another worker may hold the delivery now
      // (and have sent it), so a send of it still waiting for a connection here must not start.
      for (const id of await this.options.store.outbox.renewLeases(ids, this.id, until)) {
        if (this.heldUntil.has(id)) this.heldUntil.set(id, renewedAt + this.leaseMs);
      }
      this.renewalFailing = false;
    } catch (error) {
      if (!this.renewalFailing) this.options.logger.warn({ err: error }, 'could not renew the leases of deliveries in flight; will retry');
      this.renewalFailing = true;
    } finally {
      this.renewing = false;
    }
  }

  private launch(item: DueDelivery): void {
    const { id, channel } = item.delivery;
    this.inFlightIds.add(id);
    this.inFlightByChannel.set(channel, (this.inFlightByChannel.get(channel) ?? 0) + 1);
    const work = this.deliver(item);
    this.inFlight.add(work);
    void work.finally(() => {
      this.inFlight.delete(work);
      this.inFlightIds.delete(id);
      this.inFlightByChannel.set(channel, (this.inFlightByChannel.get(channel) ?? 1) - 1);
      this.heldUntil.delete(id);
      this.wake();
    });
  }

  /**
   * Whether a send may start: at least a third of this worker's lease on the delivery is left. Not
   * so after the renewals have failed for that long, or when the process was frozen (SIGSTOP, a
   * paused machine) past it: another worker may hold the delivery by now and have sent it, and a
   * send started here would be a second one that nobody records.
   */
  private stillHeld(id: string): boolean {
    return (this.heldUntil.get(id) ?? 0) - performance.now() >= this.leaseMs / 3;
  }

  private slotsFor(channel: Channel): Slots | undefined {
    if (channel.concurrency === undefined) return undefined;
    let slots = this.channelSlots.get(channel.name);
    if (slots === undefined) {
      slots = new Slots(channel.concurrency);
      this.channelSlots.set(channel.name, slots);
    }
    return slots;
  }

  /**
   * Records an attempt while this worker holds the delivery; false if another worker has taken it
   * over (the outcome is then theirs to record). While the database does not answer (a
   * restart, a failover) the write is tried again until it succeeds: the outcome of a message
   * already sent must not be lost, or the delivery would be sent again once its lease runs out.
   * Gives up only when the worker stops; the lease then brings the delivery back after the restart
   * (at least once).
   */
  private async record(delivery: DeliveryRecord, attempt: AttemptRecord['attempt'], result: AttemptOutcome): Promise<boolean> {
    let waitMs = RECORD_RETRY_FIRST_MS;
    while (true) {
      try {
        const recorded = await this.recorder.run({ deliveryId: delivery.id, owner: this.id, attempts: delivery.attempts, attempt, result });
        if (this.claiming) this.recordedDuringClaim.add(delivery.id);
        return recorded;
      } catch (error) {
        if (!this.running) throw error;
        if (waitMs === RECORD_RETRY_FIRST_MS) {
          this.options.logger.warn(
            { err: error, deliveryId: delivery.id },
            'could not record a delivery attempt; retrying until the database answers',
          );
        }
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        waitMs = Math.min(waitMs * 2, RECORD_RETRY_MAX_MS);
      }
    }
  }

  /** What an attempt's result means for the delivery: a retry is scheduled, or dead past the window. */
  private outcomeOf(delivery: DeliveryRecord, result: SendResult): AttemptOutcome {
    if (result.outcome !== 'retry') return result;
    const runAt = nextAttemptAt(delivery.queuedAt, this.now(), delivery.attempts + 1, this.retry, undefined, result.retryAfterMs);
    return runAt === null ? { outcome: 'dead', error: result.error } : { outcome: 'retry', error: result.error, runAt };
  }

  private async deliver({ delivery, payload }: DueDelivery): Promise<void> {
    const log = this.options.logger.child({ reference: delivery.reference, channel: delivery.channel, deliveryId: delivery.id });
    const channel = this.channels.get(delivery.channel);
    // A send that waits for a free connection of its channel is timed from when it starts.
    const slots = channel && this.slotsFor(channel);
    const slot = (await slots?.take()) ?? true;
    if (!slot || !this.running) {
      // Stopping: no send starts any more. Given back unused, still due.
      if (slot) slots?.give();
      await this.options.store.outbox.releaseClaims([delivery.id], this.id).catch(() => {
        // left to its lease: it is claimed again once that runs out
      });
      return;
    }
    const attemptedAt = this.now();
    const started = performance.now();
    let result: SendResult;
    if (!channel) {
      result = { outcome: 'retry', error: `channel "${delivery.channel}" is not configured in this process` };
    } else {
      try {
        if (!this.stillHeld(delivery.id)) {
          log.warn('the lease ran out before the send could start; left to the worker that holds it now');
          return;
        }
        result = await channel.send(delivery, payload);
      } catch (error) {
        result = { outcome: 'retry', error: error instanceof Error ? error.message : String(error) };
      } finally {
        slots?.give();
      }
    }
    const durationMs = performance.now() - started;
    const failures = delivery.attempts + 1;
    const outcome = this.outcomeOf(delivery, result);
    // The attempt that spends the retry window is recorded as `dead`, as the delivery is.
    const attempt = { attemptedAt, outcome: outcome.outcome, error: outcome.outcome === 'succeeded' ? null : outcome.error, durationMs };
    let recorded: boolean;
    try {
      recorded = await this.record(delivery, attempt, outcome);
    } catch (error) {
      // Stopped before the attempt could be recorded: the lease expires and the delivery is tried again.
      log.error({ err: error }, 'could not record a delivery attempt before stopping; it is tried again after its lease');
      return;
    }
    if (!recorded) {
      // Another worker took it over after the lease ran out (its outcome stands), or this outcome was
      // already written by a commit whose answer was lost on the way.
      log.warn(
        { attempt: failures, outcome: outcome.outcome },
        'the delivery is no longer held under this lease; outcome not recorded again',
      );
      return;
    }
    switch (outcome.outcome) {
      case 'succeeded':
        log.info({ attempt: failures, durationMs: Math.round(durationMs) }, `${payload.kind} delivered`);
        this.options.onDelivered?.(delivery.channel, (this.now().getTime() - delivery.queuedAt.getTime()) / 1000);
        break;
      case 'failed':
        log.error({ attempt: failures, error: outcome.error }, 'delivery failed permanently; re-queue it with the CLI once fixed');
        break;
      case 'dead':
        log.error({ attempt: failures, error: outcome.error }, 'delivery given up after the retry window; re-queue it with the CLI');
        break;
      case 'retry':
        log.warn({ attempt: failures, error: outcome.error, retryAt: outcome.runAt.toISOString() }, 'delivery attempt failed; will retry');
    }
  }
}

/** A count of free places, and the callers waiting for one, in order. */
class Slots {
  private readonly waiting: ((taken: boolean) => void)[] = [];
  constructor(private free: number) {}

  /** True once a place is this caller's; false if the wait was abandoned (abandonWaiting). */
  async take(): Promise<boolean> {
    if (this.free > 0) {
      this.free--;
      return true;
    }
    return new Promise<boolean>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free++;
  }

  /** Every caller waiting now gets no place. */
  abandonWaiting(): void {
    for (const next of this.waiting.splice(0)) next(false);
  }
}

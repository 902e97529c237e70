// The claim loop: on a wake-up or a poll, claims the due deliveries its channels have room for (as
// the pace allows) and launches each. Claims are made one at a time: a wake-up during one makes the
// loop claim again once it is done.
import type { Logger } from 'pino';
import type { DueDelivery, Outbox } from '../storage/ports.js';
import { type OutageNotice, outageNotice } from './outage-notice.js';
import type { ClaimPacing } from './pacing.js';
import type { OpenChannel } from './slots.js';

/**
 * `claimingAgain`: a wake-up came (or more may be due) during a claim, so another follows.
 * `paced`: the timer wakes the loop when the pace allows the next chunk; wake-ups wait for it.
 */
type LoopState = 'idle' | 'claiming' | 'claimingAgain' | 'paced';

export interface ClaimLoopOptions {
  readonly isRunning: () => boolean;
  /** The channels with room for a claim. */
  readonly openChannels: () => readonly OpenChannel[];
  readonly pacing: ClaimPacing;
  /** Leases up to `capacity` due deliveries per channel to this worker (Outbox.claimDue). */
  readonly claimDue: (capacity: ReadonlyMap<string, number>) => Promise<DueDelivery[]>;
  /** The leases of the deliveries in flight here, which a claim of this worker's may take again. */
  readonly leases: { has(id: string): boolean; hold(id: string, claimedAt: number): void };
  /** Starts sending a claimed delivery (claimed at `claimedAt`, performance.now()). */
  readonly launch: (item: DueDelivery, claimedAt: number) => void;
  /** Gives claimed deliveries back unused, still due (Outbox.releaseClaims). */
  readonly giveBack: (ids: readonly string[]) => Promise<void>;
  readonly logger: Logger;
  /** How often to look for due retries when nothing wakes the loop. */
  readonly pollIntervalMs: number;
}

export class ClaimLoop {
  private state: LoopState = 'idle';
  /** The last run of claims, perhaps still under way. */
  private run: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Whether the last claim got all it asked for: more may be due, which a burst elsewhere may hold back. */
  private lastClaim: 'filled' | 'short' = 'short';
  /**
   * Deliveries whose attempt was recorded while a claim was running. That claim may have leased one
   * again just before the record committed (its lease ran out while the database was away), and
   * must not send it a second time.
   */
  private readonly recordedDuringClaim = new Set<string>();
  private readonly outage: OutageNotice;

  constructor(private readonly options: ClaimLoopOptions) {
    const { logger } = options;
    this.outage = outageNotice(
      (error) => logger.error({ err: error }, 'delivery worker could not read the outbox; will retry'),
      () => logger.info('delivery worker reads the outbox again'),
    );
  }

  /** Look for due deliveries now. */
  wake(): void {
    if (!this.options.isRunning() || this.state === 'paced') return;
    if (this.state === 'claiming' || this.state === 'claimingAgain') {
      this.state = 'claimingAgain';
      return;
    }
    this.run = this.claimWhileDue();
  }

  /** An attempt of this delivery was recorded. */
  noteRecorded(id: string): void {
    if (this.state === 'claiming' || this.state === 'claimingAgain') this.recordedDuringClaim.add(id);
  }

  /** Resolves once the claims under way are done; the loop goes on looking (for tests). */
  settled(): Promise<void> | undefined {
    return this.run;
  }

  /**
   * Looks no more (no poll, no pace wait); resolves once the claims under way are done. Call it once
   * `isRunning()` is false: a claim still running would otherwise set the next poll.
   */
  halt(): Promise<void> | undefined {
    if (this.state === 'paced') this.state = 'idle';
    clearTimeout(this.timer);
    return this.run;
  }

  private async claimWhileDue(): Promise<void> {
    const { isRunning, pacing } = this.options;
    clearTimeout(this.timer);
    let after: 'idle' | 'paced' = 'idle';
    let nextLookMs = this.options.pollIntervalMs;
    try {
      do {
        this.state = 'claiming';
        const open = this.options.openChannels();
        if (open.length === 0) break;
        if (this.lastClaim === 'filled' && pacing.sharedCountDue()) {
          await pacing.countSharedIntake();
          if (!isRunning()) break; // stopped meanwhile: claim nothing more
        }
        const capacity = pacing.shares(open);
        if (capacity.size === 0) {
          after = 'paced';
          nextLookMs = pacing.nextChunkInMs() ?? nextLookMs;
          break;
        }
        await this.claim(capacity);
        this.outage.succeeded();
        // A wake-up or a full claim may have set it meanwhile, which the type checker cannot see.
      } while ((this.state as LoopState) === 'claimingAgain' && isRunning());
    } catch (error) {
      this.outage.failed(error);
    } finally {
      this.state = after;
    }
    if (isRunning())
      this.timer = setTimeout(() => {
        if (this.state === 'paced') this.state = 'idle';
        this.wake();
      }, nextLookMs).unref();
  }

  /** One claim: launches what it got, and gives back at once what it must not send (not left to its lease). */
  private async claim(capacity: ReadonlyMap<string, number>): Promise<void> {
    const { leases, isRunning } = this.options;
    this.recordedDuringClaim.clear();
    const claimedAt = performance.now();
    const due = await this.options.claimDue(capacity);
    const unused: string[] = [];
    let started = 0;
    for (const item of due) {
      const id = item.delivery.id;
      if (leases.has(id)) {
        leases.hold(id, claimedAt); // its lease, renewed by this claim: the send is not started twice
        continue;
      }
      if (isRunning() && !this.recordedDuringClaim.has(id)) {
        this.options.launch(item, claimedAt);
        started++;
      } else unused.push(id);
    }
    this.options.pacing.spend(started);
    if (unused.length > 0) await this.options.giveBack(unused);
    const filled = [...capacity].some(([name, count]) => due.filter((item) => item.delivery.channel === name).length === count);
    this.lastClaim = filled ? 'filled' : 'short';
    if (filled) this.state = 'claimingAgain';
  }
}

/**
 * Deliveries of a channel this process is not configured with are left pending for a process that
 * has it: said once at start, so that they are not forgotten. A count that cannot be read says nothing.
 */
export async function warnOfOtherChannels(
  outbox: Pick<Outbox, 'countByChannelAndStatus'>,
  channels: { has(name: string): boolean },
  logger: Logger,
): Promise<void> {
  const counts = await outbox.countByChannelAndStatus().catch(() => []);
  for (const { channel, status, count } of counts) {
    if (status !== 'pending' || count === 0 || channels.has(channel)) continue;
    logger.warn(
      { channel, pending: count },
      `${count} ${channel} deliveries are pending, but this instance has no ${channel} channel configured: they wait for one that has`,
    );
  }
}

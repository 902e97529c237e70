// Lease renewal: the worker renews the leases of the deliveries it is sending or recording, so that
// none is taken over while it waits for a connection or a slow receiver (another instance would send
// it again). A worker that dies or hangs stops renewing, and its claims come back after the lease.
import type { Logger } from 'pino';
import { outageNotice } from './outage-notice.js';

/** Leases in flight are renewed this many times a lease, so one late renewal does not let one lapse. */
export const RENEWALS_PER_LEASE = 3;

export interface LeaseOptions {
  readonly leaseMs: number;
  /** Extends to `until` this worker's leases on these deliveries; returns the ids renewed (Outbox.renewLeases). */
  readonly renew: (deliveryIds: readonly string[], until: Date) => Promise<string[]>;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Milliseconds that run on while the process is frozen (performance.now()). */
  readonly monotonic?: () => number;
}

export class HeldLeases {
  /**
   * By when (monotonic) this worker's lease on each delivery in flight runs out, as far as it knows:
   * set by the claim, moved on by each renewal that succeeds.
   */
  private readonly heldUntil = new Map<string, number>();
  /** The renewal under way: one at a time. */
  private renewal: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly failures = outageNotice((error) =>
    this.options.logger.warn({ err: error }, 'could not renew the leases of deliveries in flight; will retry'),
  );
  private readonly monotonic: () => number;

  constructor(private readonly options: LeaseOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  /** A delivery claimed at `claimedAt` (monotonic) is now in flight here: its lease is renewed until released. */
  hold(id: string, claimedAt: number): void {
    this.heldUntil.set(id, claimedAt + this.options.leaseMs);
  }

  /** Whether the delivery is in flight here (sent or being recorded). */
  has(id: string): boolean {
    return this.heldUntil.has(id);
  }

  /** No longer in flight: its lease is not renewed any more. */
  release(id: string): void {
    this.heldUntil.delete(id);
  }

  /**
   * Whether a send may start: at least a third of the lease is left. Not so after renewals failed
   * that long, or when the process was frozen past it: another worker may hold the delivery by now
   * and have sent it, and a send started here would be a second one that nobody records.
   */
  stillHeld(id: string): boolean {
    return (this.heldUntil.get(id) ?? 0) - this.monotonic() >= this.options.leaseMs / 3;
  }

  startRenewing(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.renew(), this.options.leaseMs / RENEWALS_PER_LEASE).unref();
  }

  stopRenewing(): void {
    clearInterval(this.timer);
  }

  /**
   * Extends the leases in flight, fenced by their owner: a lease another worker has taken over (this
   * one was cut off for longer than the lease) stays the other's. While the database is away,
   * renewals fail like claims do, said once until one succeeds.
   */
  renew(): Promise<void> {
    if (this.renewal !== undefined || this.heldUntil.size === 0) return this.renewal ?? Promise.resolve();
    this.renewal = this.renewNow().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  private async renewNow(): Promise<void> {
    try {
      const until = new Date(this.options.now().getTime() + this.options.leaseMs);
      const renewedAt = this.monotonic();
      // Only the leases renewed move on: one not renewed may be another worker's by now (after an
      // outage longer than the lease), so a send of it still waiting here must not start.
      for (const id of await this.options.renew([...this.heldUntil.keys()], until)) {
        if (this.heldUntil.has(id)) this.heldUntil.set(id, renewedAt + this.options.leaseMs);
      }
      this.failures.succeeded();
    } catch (error) {
      this.failures.failed(error);
    }
  }
}

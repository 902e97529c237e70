// Intake first: a person or agent waits for each inquiry's answer, while the inbox does not notice
// mail a few seconds late. So while intake is above `busyAbovePerS`, delivery starts at most
// `pacedPerS` deliveries a second (never none) in chunks; below it nothing is paced (docs/delivery.md).
import type { OpenChannel } from './slots.js';

export interface PaceOptions {
  /** Intake above this many inquiries per second (at this instance, or at all together) makes delivery pace itself. */
  readonly busyAbovePerS: number;
  /** Deliveries started per second while paced. */
  readonly pacedPerS: number;
  /** Deliveries claimed together while paced: each claim is a committed write, worth covering several. */
  readonly chunk: number;
}

/** A small trickle: every instance pays its own, at the moment processor is scarcest. */
export const DEFAULT_PACE: PaceOptions = Object.freeze({ busyAbovePerS: 100, pacedPerS: 10, chunk: 5 });

/** Intake is counted in windows this long, aligned to the clock. */
export const PACE_WINDOW_MS = 250;

export class DeliveryPacer {
  /** The window now being counted (its number since the clock's zero). */
  private window = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private inPreviousWindow = 0;
  private saved: number;
  private savedAt = 0;
  /** The last window in which all instances together were found above the rate. */
  private sharedBusyWindow = Number.NEGATIVE_INFINITY;
  /** The window in which they were last counted. */
  private sharedCheckedWindow = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: PaceOptions = DEFAULT_PACE,
    /** Milliseconds, monotonic. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.saved = options.chunk;
  }

  /** An inquiry was committed at this instance. */
  noteIntake(): void {
    this.roll();
    this.inWindow++;
  }

  /**
   * Intake above `busyAbovePerS`, here in the current or last whole window, or at all instances when
   * last counted in one of those. The rate alone decides: a loop waiting on a shared database looks
   * idle while the processor it would mail with is taken.
   */
  busy(): boolean {
    this.roll();
    const threshold = this.windowThreshold();
    return this.inWindow > threshold || this.inPreviousWindow > threshold || this.sharedBusyWindow >= this.window - 1;
  }

  /**
   * Whether to count all instances' intake now (a burst at the others paces this one too): not while
   * already busy, and once a window. Relies on the instances' clocks agreeing well within a window.
   */
  sharedCountDue(): boolean {
    return !this.busy() && this.sharedCheckedWindow !== this.window;
  }

  /** The most worth counting: one over the threshold decides. */
  sharedCountLimit(): number {
    return Math.floor(this.windowThreshold()) + 1;
  }

  /** All instances together received `count` inquiries in the last window's length. */
  noteSharedIntake(count: number): void {
    this.roll();
    this.sharedCheckedWindow = this.window;
    if (count > this.windowThreshold()) this.sharedBusyWindow = this.window;
  }

  /**
   * How many deliveries may start now: unlimited while not busy; while busy, what the pace has
   * saved up, and none until that makes a whole chunk.
   */
  allowance(): number {
    const now = this.now();
    if (!this.busy()) {
      this.saved = this.options.chunk;
      this.savedAt = now;
      return Number.POSITIVE_INFINITY;
    }
    this.saved = Math.min(this.options.chunk, this.saved + ((now - this.savedAt) * this.options.pacedPerS) / 1000);
    this.savedAt = now;
    return this.saved >= this.options.chunk ? Math.floor(this.saved) : 0;
  }

  /** Deliveries started: they use up the allowance. */
  spend(count: number): void {
    this.saved = Math.max(0, this.saved - count);
  }

  /** Milliseconds until the next chunk is saved up (at least 1). */
  nextChunkInMs(): number {
    return Math.max(1, Math.ceil(((this.options.chunk - this.saved) * 1000) / this.options.pacedPerS));
  }

  private windowThreshold(): number {
    return (this.options.busyAbovePerS * PACE_WINDOW_MS) / 1000;
  }

  private roll(): void {
    const now = this.now();
    const window = Math.floor(now / PACE_WINDOW_MS);
    if (window === this.window) return;
    // A window with no call in between counted nothing.
    this.inPreviousWindow = window === this.window + 1 ? this.inWindow : 0;
    this.inWindow = 0;
    this.window = window;
  }
}

export interface ClaimPacingOptions {
  /** The pacer, or null: never paced. */
  readonly pacer: DeliveryPacer | null;
  /** Inquiries all instances received since `since`, counted up to `limit` (InquiryStore.countReceivedSince). */
  readonly countReceivedSince: (since: Date, limit: number) => Promise<number>;
  readonly now: () => Date;
}

/** The pacer as the claim loop uses it: how many to claim of each channel, and when to look again. */
export class ClaimPacing {
  /** Where the allowance is shared out from next (fairness between channels). */
  private shareStart = 0;

  constructor(private readonly options: ClaimPacingOptions) {}

  /** Whether to count all instances' intake before the next claim (see DeliveryPacer.sharedCountDue). */
  sharedCountDue(): boolean {
    return this.options.pacer?.sharedCountDue() ?? false;
  }

  /** Tells the pacer the intake of all instances in the last window. A hint: a failed count is none. */
  async countSharedIntake(): Promise<void> {
    const { pacer, countReceivedSince, now } = this.options;
    if (pacer === null) return;
    const since = new Date(now().getTime() - PACE_WINDOW_MS);
    let count = 0;
    try {
      count = await countReceivedSince(since, pacer.sharedCountLimit());
    } catch {
      // counted as none
    }
    pacer.noteSharedIntake(count);
  }

  /**
   * How many deliveries to claim for each open channel: its free places, and of the pacer's
   * allowance (while intake is bursting) an even share, the odd ones going round the channels.
   * Empty while the pace allows none, or when no channel is open.
   */
  shares(open: readonly OpenChannel[]): Map<string, number> {
    if (open.length === 0) return new Map();
    const allowance = this.options.pacer?.allowance() ?? Number.POSITIVE_INFINITY;
    const shares = new Map<string, number>();
    const each = Math.floor(allowance / open.length);
    const extra = allowance - each * open.length;
    for (let i = 0; i < open.length; i++) {
      const { name, free } = open[(this.shareStart + i) % open.length] as OpenChannel;
      const count = Math.min(free, each + (i < extra ? 1 : 0));
      if (count > 0) shares.set(name, count);
    }
    this.shareStart = (this.shareStart + 1) % open.length;
    return shares;
  }

  /** Deliveries started: they use up the allowance. */
  spend(count: number): void {
    this.options.pacer?.spend(count);
  }

  /** Milliseconds until the pace allows the next chunk; undefined when nothing paces. */
  nextChunkInMs(): number | undefined {
    return this.options.pacer?.nextChunkInMs();
  }
}

// Intake first. An instance's HTTP intake and its delivery worker share one event loop, and mail is
// the dearer of the two (composing and sending one costs several times an inquiry's commit). In a
// burst that saturates the loop, a person or agent is waiting for each 200, while the studio's inbox
// does not notice mail that arrives a few seconds later. So while inquiries arrive faster than
// `busyAbovePerS` and the event loop has been busy at least `saturatedAbove` of the time (three
// quarters: on PostgreSQL a loaded loop still waits on the database now and then), the worker
// starts at most `pacedPerS` deliveries a second — never none — in chunks, so that each claim (a
// committed write) still covers several. With processor to spare, or once the burst is over,
// nothing is paced: every inquiry's mail leaves right after its commit, and a backlog goes out at
// full speed.

export interface PaceOptions {
  /** Intake above this many inquiries per second (at this instance) can make delivery pace itself. */
  readonly busyAbovePerS: number;
  /** …when the event loop was busy at least this share of the time (0–1). */
  readonly saturatedAbove: number;
  /** Deliveries started per second while paced. */
  readonly pacedPerS: number;
  /** Deliveries claimed together while paced. */
  readonly chunk: number;
}

export const DEFAULT_PACE: PaceOptions = Object.freeze({ busyAbovePerS: 100, saturatedAbove: 0.75, pacedPerS: 50, chunk: 10 });

/** Intake and the loop's load are counted in windows this long, aligned to the clock. */
export const PACE_WINDOW_MS = 250;

export interface PacerClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** The share of the time since the previous call that the event loop was busy (0–1). */
  loopBusyShare(): number;
}

/** performance.now() and the event loop's utilization (Node's perf_hooks). */
export function eventLoopClock(): PacerClock {
  let last = performance.eventLoopUtilization();
  return {
    now: () => performance.now(),
    loopBusyShare() {
      const current = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(current, last).utilization;
      last = current;
      return share;
    },
  };
}

export class DeliveryPacer {
  /** The window now being counted (its number since the clock's zero). */
  private window = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private inPreviousWindow = 0;
  /** Whether the loop was saturated over the last sample: at least one whole window long. */
  private saturated = false;
  private sampledAt = Number.NEGATIVE_INFINITY;
  private saved: number;
  private savedAt = 0;

  constructor(
    private readonly options: PaceOptions = DEFAULT_PACE,
    private readonly clock: PacerClock = eventLoopClock(),
  ) {
    this.saved = options.chunk;
  }

  /** An inquiry was committed at this instance. */
  noteIntake(): void {
    this.roll();
    this.inWindow++;
  }

  /** Intake above `busyAbovePerS` (in the current or the last whole window) on a saturated loop. */
  busy(): boolean {
    this.roll();
    const threshold = (this.options.busyAbovePerS * PACE_WINDOW_MS) / 1000;
    return this.saturated && (this.inWindow > threshold || this.inPreviousWindow > threshold);
  }

  /**
   * How many deliveries may start now: unlimited while not busy; while busy, what the pace has
   * saved up, and none until that makes a whole chunk.
   */
  allowance(): number {
    const now = this.clock.now();
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

  private roll(): void {
    const now = this.clock.now();
    const window = Math.floor(now / PACE_WINDOW_MS);
    if (window === this.window) return;
    // A window with no call in between counted nothing.
    this.inPreviousWindow = window === this.window + 1 ? this.inWindow : 0;
    this.inWindow = 0;
    this.window = window;
    // The loop's load over a few milliseconds says nothing: a sample spans a whole window or more.
    if (now - this.sampledAt >= PACE_WINDOW_MS) {
      this.saturated = this.clock.loopBusyShare() >= this.options.saturatedAbove;
      this.sampledAt = now;
    }
  }
}

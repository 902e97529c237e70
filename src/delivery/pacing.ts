// Intake first. An instance's HTTP intake and its delivery worker share one event loop, and mail is
// the dearer of the two (composing and sending one costs several times an inquiry's commit). In a
// burst, a person or agent is waiting for each 200, while the studio's inbox does not notice mail
// that arrives a few seconds later. So while inquiries arrive faster than `busyAbovePerS`, the
// worker starts at most `pacedPerS` deliveries a second — never none — in chunks, so that each claim
// (a committed write) still covers several; the moment the burst is over it goes back to full
// speed and the backlog goes out. Below that rate nothing is paced: every inquiry's mail leaves
// right after its commit, as before.

export interface PaceOptions {
  /** Intake above this many inquiries per second (at this instance) makes delivery pace itself. */
  readonly busyAbovePerS: number;
  /** Deliveries started per second while paced. */
  readonly pacedPerS: number;
  /** Deliveries claimed together while paced. */
  readonly chunk: number;
}

export const DEFAULT_PACE: PaceOptions = Object.freeze({ busyAbovePerS: 100, pacedPerS: 50, chunk: 10 });

/** Intake is counted in windows this long; a burst is over one whole quiet window after it ends. */
const WINDOW_MS = 250;

export class DeliveryPacer {
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private inPreviousWindow = 0;
  private saved: number;
  private savedAt = 0;

  constructor(
    private readonly options: PaceOptions = DEFAULT_PACE,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.saved = options.chunk;
  }

  /** An inquiry was committed at this instance. */
  noteIntake(): void {
    this.roll();
    this.inWindow++;
  }

  /** Whether intake is above `busyAbovePerS` (in the current or the last whole window). */
  busy(): boolean {
    this.roll();
    const threshold = (this.options.busyAbovePerS * WINDOW_MS) / 1000;
    return this.inWindow > threshold || this.inPreviousWindow > threshold;
  }

  /**
   * How many deliveries may start now: unlimited while intake is not busy; while it is, what the
   * pace has saved up, and none until that makes a whole chunk.
   */
  allowance(): number {
    if (!this.busy()) {
      this.saved = this.options.chunk;
      this.savedAt = this.now();
      return Number.POSITIVE_INFINITY;
    }
    const now = this.now();
    this.saved = Math.min(this.options.chunk, this.saved + ((now - this.savedAt) * this.options.pacedPerS) / 1000);
    this.savedAt = now;
    return this.saved >= this.options.chunk ? Math.floor(this.saved) : 0;
  }

  /** Deliveries started: they use up the allowance. */
  spend(count: number): void {
    this.saved = Math.max(0, this.saved - count);
  }

  /** Milliseconds until the next chunk is saved up (0 when it already is). */
  nextChunkInMs(): number {
    return Math.max(0, Math.ceil(((this.options.chunk - this.saved) * 1000) / this.options.pacedPerS));
  }

  private roll(): void {
    const now = this.now();
    if (now - this.windowStart < WINDOW_MS) return;
    // A window with no intake in between means the previous one counted nothing.
    this.inPreviousWindow = now - this.windowStart < 2 * WINDOW_MS ? this.inWindow : 0;
    this.inWindow = 0;
    this.windowStart = now;
  }
}

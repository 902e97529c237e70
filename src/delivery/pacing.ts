// Intake first. An instance's HTTP intake and its delivery worker share one event loop, and mail is
// the dearer of the two (composing and sending one costs five to seven times an inquiry's whole
// intake, HTTP and commit included). In a burst, a person or agent is waiting for each 200, while
// the studio's inbox does not notice mail that arrives a few seconds later. So while inquiries
// arrive faster than `busyAbovePerS` (at this instance, or at all instances together, below), the
// worker starts at most `pacedPerS` deliveries a second — never none — in chunks, so that each
// claim (a committed write) still covers several. Below that rate, or once the burst is over,
// nothing is paced: every inquiry's mail leaves right after its commit, and a backlog goes out at
// full speed.
//
// The rate alone decides, not how busy this process looks: where instances share a machine or a
// database, an instance's event loop waits on the database while the processor it would mail with
// is taken. Pacing only on a saturated loop let two instances on PostgreSQL mail 150-176 a second
// during a load instead of the 100 they were paced to then, at ~0.8 ms of processor each
// (docs/benchmarks.md, "Where the time goes").
//
// Where several instances share a database, inquiries arriving at the others pace this one too: an
// instance that takes none of a burst would otherwise mail it at full speed, and the database would
// pay for those claims and records beside the burst's intake (on one 2-core machine, a loaded
// instance took 5,984-6,304 inquiries a second while an idle one beside it mailed ~900 a second,
// and 8,315-8,357 once the idle one kept to the pace). So a worker that has a backlog (its last
// claim got all it asked for), and is not paced by its own intake, counts the inquiries all
// instances received in the last window (an indexed count that stops one past the threshold), at
// most once a window. An idle instance thus notices a burst at its first full claim (at most one
// claim of its concurrency unpaced, up to a poll interval after the burst starts). The count is a
// hint: where it fails, delivery goes on unpaced. It relies on the instances' clocks agreeing to
// well within a window (NTP does): skewed by d, the count covers 250 ms ± d, so the pace starts at
// a lower or higher real rate and lasts about d longer or shorter.
//
// The trickle is small because it is paid per instance, at the moment processor is scarcest. A mail
// costs ~0.8 ms of processor on a quiet machine and 1.6-1.9 ms on a slower one: at 50 a second,
// nodemailer took ~11 % of a loaded PostgreSQL instance's processor (a CPU profile of the load
// alone), and N instances pay it N times. At 10 a second, in chunks of 5, it took ~3 %, and a claim
// code (claimed ahead of inquiry mail) goes out with the next chunk, about half a second later.

export interface PaceOptions {
  /** Intake above this many inquiries per second (at this instance, or at all together) makes delivery pace itself. */
  readonly busyAbovePerS: number;
  /** Deliveries started per second while paced. */
  readonly pacedPerS: number;
  /** Deliveries claimed together while paced. */
  readonly chunk: number;
}

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
   * Intake above `busyAbovePerS`, at this instance in the current or the last whole window, or at
   * all instances together when last counted (noteSharedIntake) in one of those windows.
   */
  busy(): boolean {
    this.roll();
    const threshold = this.windowThreshold();
    return this.inWindow > threshold || this.inPreviousWindow > threshold || this.sharedBusyWindow >= this.window - 1;
  }

  /** Whether to count all instances' intake now: not while already busy, and once a window. */
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

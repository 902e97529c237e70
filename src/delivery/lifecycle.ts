// Start and stop of a long-lived loop. A stop asked while a start waits wins (the loop stays
// stopped); a start waits for a stop under way; a stop asked again joins the one under way. Stopping
// halts at once, then waits for the work under way for at most a grace period.
import { settlesWithin } from '../deadline.js';

export interface LifecycleSteps {
  /** Before running: may wait (a store's leases released). */
  readonly prepare?: () => Promise<void>;
  /** Now running. */
  readonly begin: () => void;
  /** Stopping: takes no more work now; resolves when the work under way has finished. */
  readonly halt: () => Promise<void>;
  /** After the halt, or after the grace if it came first (`finished` false). */
  readonly end: (finished: boolean) => void;
}

export interface Lifecycle {
  isRunning(): boolean;
  start(): Promise<void>;
  /** Stops, waiting for the work under way for at most `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export function createLifecycle(steps: LifecycleSteps): Lifecycle {
  let phase: 'stopped' | 'running' = 'stopped';
  /** The stop under way, or done (until the next start). */
  let stopping: Promise<void> | undefined;
  /** How many times stop() was called: a start that sees it change while it waits does not start. */
  let stopsAsked = 0;
  const isRunning = () => phase === 'running';

  const stopNow = async (graceMs: number): Promise<void> => {
    phase = 'stopped';
    const finished = await settlesWithin(steps.halt(), graceMs);
    steps.end(finished);
  };

  return {
    isRunning,
    async start() {
      if (isRunning()) return;
      const stopsBefore = stopsAsked;
      await stopping;
      if (stopsAsked !== stopsBefore) return;
      stopping = undefined;
      if (steps.prepare) await steps.prepare();
      if (stopsAsked !== stopsBefore || isRunning()) return;
      phase = 'running';
      steps.begin();
    },
    stop(graceMs) {
      stopsAsked++;
      stopping ??= stopNow(graceMs);
      return stopping;
    },
  };
}

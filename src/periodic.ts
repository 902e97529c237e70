// A look taken at once and then every interval, never two at a time: the digest's schedule and the
// delivery alerts both run one. `stop` waits for a look under way.

export interface PeriodicCheck {
  /** Looks at once, then every interval (nothing when not enabled). */
  start(): void;
  /** Looks once now, or joins the look under way; resolves when done. */
  check(): Promise<void>;
  /** Stops looking and waits for a look under way. */
  stop(): Promise<void>;
}

/** `look` must never reject: it logs its own failures. */
export function periodicCheck(look: () => Promise<void>, intervalMs: number, enabled = true): PeriodicCheck {
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  const check = (): Promise<void> => {
    running ??= look().finally(() => {
      running = null;
    });
    return running;
  };
  return {
    start() {
      if (!enabled || timer !== undefined) return;
      void check();
      timer = setInterval(() => void check(), intervalMs).unref();
    },
    check,
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}

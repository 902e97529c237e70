// Says a failure once per outage, not once per try, and (if asked) when it is over: a worker retrying
// while the database is away would otherwise log every poll.

export interface OutageNotice {
  /** A try failed: reported if the last one succeeded. */
  failed(error: unknown): void;
  /** A try succeeded: the end of an outage is reported, if there was one. */
  succeeded(): void;
}

export function outageNotice(report: (error: unknown) => void, recovered: () => void = () => {}): OutageNotice {
  let state: 'answering' | 'away' = 'answering';
  return {
    failed(error) {
      if (state === 'answering') report(error);
      state = 'away';
    },
    succeeded() {
      if (state === 'away') recovered();
      state = 'answering';
    },
  };
}

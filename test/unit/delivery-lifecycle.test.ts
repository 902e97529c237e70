// Start and stop (src/delivery/lifecycle.ts) with recorded steps: a stop asked while a start waits
// wins, a start waits for a stop under way, a second stop joins the first, and the grace bounds the
// wait for the work under way.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLifecycle, type LifecycleSteps } from '../../src/delivery/lifecycle.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A promise and the function that resolves it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A lifecycle whose steps are noted in `steps`; its halt waits for `work` (done at once by default). */
function lifecycleWith(overrides: Partial<LifecycleSteps> = {}) {
  const steps: string[] = [];
  const state = { work: Promise.resolve() };
  const lifecycle = createLifecycle({
    begin: () => void steps.push('begin'),
    halt: () => {
      steps.push('halt');
      return state.work;
    },
    end: (finished) => void steps.push(`end ${finished ? 'finished' : 'cut short'}`),
    ...overrides,
  });
  return { lifecycle, steps, state };
}

describe('lifecycle', () => {
  it('runs from start to stop: begin, then halt and end once the work is done', async () => {
    const { lifecycle, steps } = lifecycleWith();
    expect(lifecycle.isRunning()).toBe(false);
    await lifecycle.start();
    expect(lifecycle.isRunning()).toBe(true);
    await lifecycle.start(); // already running: nothing more
    await lifecycle.stop(1_000);
    expect(lifecycle.isRunning()).toBe(false);
    expect(steps).toEqual(['begin', 'halt', 'end finished']);
  });

  it('stops running at once, before the work under way is done', async () => {
    const work = gate();
    const { lifecycle, state } = lifecycleWith();
    state.work = work.opened;
    await lifecycle.start();
    const stopped = lifecycle.stop(1_000);
    expect(lifecycle.isRunning()).toBe(false);
    work.open();
    await stopped;
  });

  it('waits for the work under way at most the grace, then ends saying it was cut short', async () => {
    vi.useFakeTimers();
    const { lifecycle, steps, state } = lifecycleWith();
    state.work = new Promise(() => {});
    await lifecycle.start();
    let stopped = false;
    const stopping = lifecycle.stop(500).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(499);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(steps).toEqual(['begin', 'halt', 'end cut short']);
  });

  it('asked to stop again while stopping, waits for the same stop, not for a second grace', async () => {
    const work = gate();
    const { lifecycle, steps, state } = lifecycleWith();
    state.work = work.opened;
    await lifecycle.start();
    const first = lifecycle.stop(1_000);
    expect(lifecycle.stop(5_000)).toBe(first);
    work.open();
    await first;
    expect(steps).toEqual(['begin', 'halt', 'end finished']);
  });

  it('prepares before it begins', async () => {
    const { lifecycle, steps } = lifecycleWith({ prepare: async () => void steps.push('prepare') });
    await lifecycle.start();
    expect(steps).toEqual(['prepare', 'begin']);
  });

  it('stays stopped when stopped while preparing', async () => {
    const prepared = gate();
    const { lifecycle, steps } = lifecycleWith({
      prepare: () => {
        steps.push('prepare');
        return prepared.opened;
      },
    });
    const starting = lifecycle.start();
    while (!steps.includes('prepare')) await Promise.resolve();
    await lifecycle.stop(1_000);
    prepared.open();
    await starting;
    expect(lifecycle.isRunning()).toBe(false);
    expect(steps).toEqual(['prepare', 'halt', 'end finished']);
  });

  it('stays stopped, unprepared, when stopped right after start', async () => {
    const { lifecycle, steps } = lifecycleWith({ prepare: async () => void steps.push('prepare') });
    const starting = lifecycle.start();
    await lifecycle.stop(1_000);
    await starting;
    expect(lifecycle.isRunning()).toBe(false);
    expect(steps).toEqual(['halt', 'end finished']);
  });

  it('started while a stop is under way, starts once that stop is done', async () => {
    const work = gate();
    const { lifecycle, steps, state } = lifecycleWith();
    state.work = work.opened;
    await lifecycle.start();
    const stopped = lifecycle.stop(1_000);
    const restarted = lifecycle.start();
    await Promise.resolve();
    expect(lifecycle.isRunning()).toBe(false);
    work.open();
    await stopped;
    await restarted;
    expect(lifecycle.isRunning()).toBe(true);
    expect(steps).toEqual(['begin', 'halt', 'end finished', 'begin']);
  });

  it('stays stopped when stopped again while a start waits for the first stop', async () => {
    const work = gate();
    const { lifecycle, state } = lifecycleWith();
    state.work = work.opened;
    await lifecycle.start();
    const stopped = lifecycle.stop(1_000);
    const restarted = lifecycle.start();
    void lifecycle.stop(1_000);
    work.open();
    await stopped;
    await restarted;
    expect(lifecycle.isRunning()).toBe(false);
  });

  it('started twice at once, begins once', async () => {
    const { lifecycle, steps } = lifecycleWith();
    await Promise.all([lifecycle.start(), lifecycle.start()]);
    expect(steps).toEqual(['begin']);
  });
});

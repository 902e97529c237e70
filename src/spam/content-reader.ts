// Where the content rules run. On a thread of their own, the event loop that answers requests does
// not pay for them (docs/benchmarks.md, "The spam filter's cost").
import { Worker } from 'node:worker_threads';
import type { ReadAnswer, ReadRequest } from './content-worker.js';
import type { SpamInquiry } from './types.js';
import { type ContentReading, readContent } from './verdict.js';

export interface ContentReader {
  read(inquiry: SpamInquiry): Promise<ContentReading>;
  /** Stops the thread, if any; later reads run in-process. */
  close(): Promise<void>;
}

/** Reads on the caller's thread: the CLI, unit tests, and the fallback of threadReader. */
export const inProcessReader: ContentReader = {
  read: async (inquiry) => readContent(inquiry),
  close: async () => {},
};

/** A thread that died this many times in a row (no batch answered between) is not started again. */
export const THREAD_DEATHS_TOLERATED = 3;
/** A thread that answers nothing this long while it owes reads is stuck (a runaway pattern): ended. */
export const THREAD_STALL_MS = 5_000;

export interface ThreadReaderOptions {
  /** The worker's module; the compiled content-worker.js beside this file unless given. */
  readonly module?: URL;
  /** A thread was started (the first read, or the next read after a death). */
  readonly onThreadStart?: () => void;
  /** A thread ended other than by close(): why, and whether the reads now stay in-process for good. */
  readonly onThreadDeath?: (why: unknown, givenUp: boolean) => void;
  readonly stallMs?: number;
}

const COMPILED = import.meta.url.endsWith('.js');

/**
 * A thread for the compiled service; in-process where it runs from its sources (`npm run dev`, the
 * in-process tests), as a thread under tsx answers each message tens of milliseconds late.
 */
export function contentReader(options: Omit<ThreadReaderOptions, 'module'> = {}): ContentReader {
  return COMPILED ? threadReader(options) : inProcessReader;
}

interface Thread {
  readonly worker: Worker;
  /** It has reads to answer; heardAt: when it last answered, or began to owe. */
  owing: boolean;
  heardAt: number;
  /** Why it ended, once known: its error, or the stall. */
  why?: unknown;
}

interface Waiting {
  readonly inquiry: SpamInquiry;
  readonly resolve: (reading: ContentReading) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Reads on one worker thread, started at the first read; the reads asked for in one turn of the
 * event loop go as one message. What a thread that dies or stalls held is read in-process, and the
 * next read starts another thread: a reading is never lost, only slower.
 */
export function threadReader({
  module = new URL('./content-worker.js', import.meta.url),
  onThreadStart,
  onThreadDeath,
  stallMs = THREAD_STALL_MS,
}: ThreadReaderOptions = {}): ContentReader {
  let current: Thread | undefined;
  let closed = false;
  let deathsInARow = 0;
  let nextId = 0;
  const waiting = new Map<number, Waiting>();
  let queued: number[] = [];

  /** Reads in-process the waiting reads of these ids (all of them when left out). */
  function readHere(ids: Iterable<number> = [...waiting.keys()]): void {
    for (const id of ids) {
      const entry = waiting.get(id);
      if (entry === undefined) continue;
      waiting.delete(id);
      try {
        entry.resolve(readContent(entry.inquiry));
      } catch (error) {
        entry.reject(error);
      }
    }
  }

  /** The thread owes reads (or not): it holds the process only while it does. */
  function owing(thread: Thread, owes: boolean): void {
    if (owes && !thread.owing) thread.heardAt = performance.now();
    if (owes !== thread.owing) {
      if (owes) thread.worker.ref();
      else thread.worker.unref();
    }
    thread.owing = owes;
  }

  function start(): Thread {
    const thread: Thread = { worker: new Worker(module), owing: false, heardAt: 0 };
    thread.worker.unref();
    onThreadStart?.();
    // Owing reads and silent for stallMs: stuck (a runaway pattern). Looked at a few times a period.
    const stallCheck = setInterval(() => {
      if (!thread.owing || performance.now() - thread.heardAt < stallMs) return;
      thread.why = new Error(`the thread answered nothing for ${stallMs} ms`);
      void thread.worker.terminate();
    }, stallMs / 4).unref();
    thread.worker.on('message', (answers: readonly ReadAnswer[]) => {
      deathsInARow = 0;
      thread.heardAt = performance.now();
      for (const [id, hits] of answers) {
        const entry = waiting.get(id);
        if (entry === undefined) continue;
        if (hits === null) readHere([id]);
        else {
          waiting.delete(id);
          entry.resolve({ hits });
        }
      }
      owing(thread, waiting.size > 0);
    });
    thread.worker.on('error', (error) => {
      thread.why = error;
    });
    thread.worker.once('exit', (code) => {
      clearInterval(stallCheck);
      if (current !== thread) return;
      current = undefined;
      if (!closed) {
        deathsInARow++;
        onThreadDeath?.(thread.why ?? new Error(`the thread exited with code ${code}`), deathsInARow >= THREAD_DEATHS_TOLERATED);
      }
      readHere();
    });
    return thread;
  }

  function flush(): void {
    const ids = queued.filter((id) => waiting.has(id));
    queued = [];
    if (ids.length === 0) return;
    if (closed || deathsInARow >= THREAD_DEATHS_TOLERATED) {
      readHere(ids);
      return;
    }
    try {
      current ??= start();
      current.worker.postMessage(ids.map((id): ReadRequest => [id, (waiting.get(id) as Waiting).inquiry]));
    } catch {
      readHere(ids);
    }
    if (current) owing(current, waiting.size > 0);
  }

  return {
    read(inquiry) {
      if (closed) return inProcessReader.read(inquiry);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { inquiry, resolve, reject });
        if (queued.push(id) === 1) setImmediate(flush);
      });
    },
    async close() {
      closed = true;
      flush();
      await current?.worker.terminate();
    },
  };
}

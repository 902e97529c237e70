// Where the content rules run. On a thread of their own the event loop that answers requests does
// not pay for them (docs/benchmarks.md: they cost intake a tenth of its rate on one thread).
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

/** The worker's module beside this one, where it is compiled JavaScript (dist/). */
const COMPILED = import.meta.url.endsWith('.js');
const WORKER_MODULE = new URL('./content-worker.js', import.meta.url);

/**
 * A thread for the compiled service; in-process where it runs from its sources (`npm run dev`, the
 * in-process tests), as a thread under tsx answers each message tens of milliseconds late.
 */
export function contentReader(): ContentReader {
  return COMPILED ? threadReader() : inProcessReader;
}

interface Waiting {
  readonly inquiry: SpamInquiry;
  readonly resolve: (reading: ContentReading) => void;
  readonly reject: (error: unknown) => void;
}

/** A thread that died this often is not started again: the reads stay in-process. */
export const THREAD_DEATHS_TOLERATED = 3;

/**
 * Reads on one worker thread, started at the first read. The reads asked for in one turn of the
 * event loop go as one message. What a thread that dies held is read in-process, and the next read
 * starts another (up to THREAD_DEATHS_TOLERATED): a reading is never lost, only slower.
 */
export function threadReader({ module = WORKER_MODULE }: { module?: URL } = {}): ContentReader {
  let worker: Worker | undefined;
  let closed = false;
  let deaths = 0;
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

  function start(): Worker {
    const started = new Worker(module);
    started.on('message', (answers: readonly ReadAnswer[]) => {
      for (const [id, hits] of answers) {
        const entry = waiting.get(id);
        if (entry === undefined) continue;
        if (hits === null) readHere([id]);
        else {
          waiting.delete(id);
          entry.resolve({ hits });
        }
      }
      if (waiting.size === 0) started.unref();
    });
    // 'exit' follows 'error' (a module that fails to load, a crash).
    started.on('error', () => {});
    started.once('exit', () => {
      if (worker === started) worker = undefined;
      if (!closed) deaths++;
      readHere();
    });
    return started;
  }

  function flush(): void {
    const ids = queued.filter((id) => waiting.has(id));
    queued = [];
    if (ids.length === 0) return;
    if (closed || deaths >= THREAD_DEATHS_TOLERATED) {
      readHere(ids);
      return;
    }
    worker ??= start();
    // Held by the reads it owes: an idle thread keeps no process alive.
    worker.ref();
    try {
      worker.postMessage(ids.map((id): ReadRequest => [id, (waiting.get(id) as Waiting).inquiry]));
    } catch {
      readHere(ids);
    }
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
      await worker?.terminate();
    },
  };
}

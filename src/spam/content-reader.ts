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

/**
 * Reads on one worker thread, started at the first read. The reads asked for in one turn of the
 * event loop go as one message. Should the thread die, what it held is read in-process and the next
 * read starts another: a reading is never lost, only slower.
 */
export function threadReader({ module = WORKER_MODULE }: { module?: URL } = {}): ContentReader {
  let worker: Worker | undefined;
  let closed = false;
  let nextId = 0;
  const waiting = new Map<number, Waiting>();
  let queued: ReadRequest[] = [];

  const readHere = ({ inquiry, resolve, reject }: Waiting): void => {
    try {
      resolve(readContent(inquiry));
    } catch (error) {
      reject(error);
    }
  };

  function start(): Worker {
    const started = new Worker(module);
    started.unref();
    started.on('message', (answers: readonly ReadAnswer[]) => {
      for (const [id, hits] of answers) {
        const entry = waiting.get(id);
        if (entry === undefined) continue;
        waiting.delete(id);
        if (hits === null) readHere(entry);
        else entry.resolve({ hits });
      }
      if (waiting.size === 0) started.unref();
    });
    // 'exit' follows 'error': the exit handler reads what the thread held.
    started.on('error', () => {});
    started.once('exit', () => {
      if (worker === started) worker = undefined;
      const held = [...waiting.values()];
      waiting.clear();
      held.forEach(readHere);
    });
    return started;
  }

  function flush(): void {
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    if (closed) {
      for (const [id] of batch) {
        const entry = waiting.get(id);
        waiting.delete(id);
        if (entry) readHere(entry);
      }
      return;
    }
    worker ??= start();
    // Held by the reads it owes (an idle thread keeps no process alive).
    worker.ref();
    worker.postMessage(batch);
  }

  return {
    read(inquiry) {
      if (closed) return inProcessReader.read(inquiry);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { inquiry, resolve, reject });
        if (queued.push([id, inquiry]) === 1) setImmediate(flush);
      });
    },
    async close() {
      closed = true;
      flush();
      await worker?.terminate();
    },
  };
}

// Bulk writes (re-queueing a backlog, purging expired keys) in chunks, each its own short statement,
// so that they never hold SQLite's one writer, or the event loop of the process running them, for long.
import type { Dialect } from './ports.js';

export interface ChunkOptions {
  /** Rows a chunk changes at most. */
  readonly rows: number;
  /** The pause between two chunks. */
  readonly pauseMs: number;
}

/**
 * For a bulk write other processes wait for (the CLI's, beside the service): on SQLite, whose lock
 * is not fair, pauses longer than the longest busy_timeout sleep (100 ms) of a waiting process, so
 * the chunks cannot take the lock again and again. PostgreSQL needs no pause.
 */
export const ACROSS_PROCESSES: Readonly<Record<Dialect, ChunkOptions>> = {
  sqlite: { rows: 1_000, pauseMs: 120 },
  postgres: { rows: 1_000, pauseMs: 0 },
};

/**
 * For a bulk write in the service's own process, where SQLite runs each chunk on the event loop:
 * chunks of a few tens of milliseconds at most, and a turn of the event loop between them.
 */
export const IN_PROCESS: ChunkOptions = { rows: 250, pauseMs: 0 };

/** What one chunk did: the rows it went through (the last chunk goes through fewer than asked) and those it changed. */
export interface Chunk {
  readonly seen: number;
  readonly changed: number;
}

/**
 * Runs `chunk` (a write through at most `limit` rows) until one goes through fewer; returns the rows
 * changed in all. A chunk must go on where the last ended: choosing again among all rows, it may
 * write a row that matches again twice, and never end.
 */
export async function inChunks({ rows, pauseMs }: ChunkOptions, chunk: (limit: number) => Promise<Chunk>): Promise<number> {
  let changed = 0;
  while (true) {
    const done = await chunk(rows);
    changed += done.changed;
    if (done.seen < rows) return changed;
    await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
  }
}

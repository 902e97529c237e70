// Bulk writes (re-queueing a backlog, purging expired keys) in chunks, each its own short statement,
// so that they never hold SQLite's one writer, or the event loop of the process running them, for
// long: one statement over 200,000 deliveries held the write lock for 1.4 s, and the service's
// intake beside it failed or waited that long.
import type { Dialect } from './database.js';

export interface ChunkOptions {
  /** Rows a chunk changes at most. */
  readonly rows: number;
  /** The pause between two chunks. */
  readonly pauseMs: number;
}

/**
 * For a bulk write that other processes wait for (the CLI's, beside a running service): chunks of
 * some tens of milliseconds on SQLite, and pauses longer than the longest sleep (100 ms) of a
 * process waiting for SQLite's lock (busy_timeout's sleeps grow 1, 2, 5, … 100 ms). The lock is not
 * fair: with shorter pauses a bulk write took it again and again, and the service, its event loop
 * held by that wait, answered nothing for up to 0.8 s. PostgreSQL needs no pause.
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
 * Runs `chunk` (a write going through at most `limit` rows) until one goes through fewer than that;
 * returns how many rows the chunks changed in all. A chunk must go on from where the last one ended
 * (not choose again among all rows), or a row that matches again meanwhile is written twice, and
 * the loop need never end.
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

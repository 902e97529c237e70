// A SQLite file deleted or replaced while open lives on unnamed: writes still succeed, and are gone
// at the next start. Checked before every commit and by the health check, so they fail instead.
import { statSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/** The database's file was deleted, moved or replaced while the service had it open. */
export class DatabaseFileGoneError extends Error {
  constructor(path: string) {
    super(
      `the database file ${path} was removed or replaced while the service had it open: nothing more is stored until the service is restarted on the right file`,
    );
    this.name = 'DatabaseFileGoneError';
  }
}

/**
 * A check that the file at the database's path is still the one this connection has open (same
 * inode and device); it throws DatabaseFileGoneError when not. An in-memory database has no file.
 */
export function fileIdentityCheck(sqlite: SQLite.Database): () => void {
  if (sqlite.memory) return () => {};
  const opened = statSync(sqlite.name);
  return () => {
    const now = statSync(sqlite.name, { throwIfNoEntry: false });
    if (now?.ino !== opened.ino || now.dev !== opened.dev) throw new DatabaseFileGoneError(sqlite.name);
  };
}

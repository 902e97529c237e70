// Kysely's SQLite driver prepares every query anew, which costs as much as running it: the same few
// statements run for every inquiry, so they stay prepared (least recently used ones dropped).
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept prepared; the service issues a few dozen, IN-lists of varying length add more. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Safe because Kysely runs one query at a time on the single connection and never streams here. A
 * statement that writes outside a transaction (it commits by itself: a revocation, a lease renewal)
 * first runs `beforeAutocommit`, as a transaction's commit does (ImmediateSqliteDialect).
 */
export function withStatementCache(sqlite: SQLite.Database, beforeAutocommit: () => void): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-insert: Map order is the recency order
      } else {
        statement = guarded(sqlite.prepare(sql));
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };

  function guarded(statement: SQLite.Statement): SqliteStatement {
    if (statement.readonly) return statement;
    const checked =
      <A extends unknown[], R>(run: (...args: A) => R) =>
      (...args: A): R => {
        if (!sqlite.inTransaction) beforeAutocommit();
        return run(...args);
      };
    return {
      reader: statement.reader,
      all: checked((parameters: readonly unknown[]) => statement.all(parameters)),
      run: checked((parameters: readonly unknown[]) => statement.run(parameters)),
      iterate: checked((parameters: readonly unknown[]) => statement.iterate(parameters)),
    };
  }
}

// Opens the configured database as a Kysely handle and prepares it (pragmas, migrations).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

export type Dialect = DatabaseConfig['kind'];

export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
}

/** Distinct SQL texts kept prepared; the service issues a few dozen, IN-lists of varying length add more. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query anew, which costs as much as running it. The same few
 * statements run for every inquiry, so keep them prepared (least recently used ones are dropped).
 * Safe because Kysely runs one query at a time on the single connection and never streams here.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-insert: Map order is the recency order
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** How long a connection waits for another writer's lock before failing (SQLite busy_timeout). */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    throw new Error('DATABASE_URL: PostgreSQL is not supported by this version yet; use sqlite:<path>');
  }
  if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
  const sqlite = new SQLite(config.path);
  // WAL lets readers (health, CLI) run beside the writer; synchronous=FULL makes every commit
  // durable on disk before it returns, which is what "answered 200" promises (CONTRACT.md).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  await migrateToLatest(db as Kysely<unknown>);
  return { db, dialect: 'sqlite' };
}

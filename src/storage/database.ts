// Opens the configured database as a Kysely handle and prepares it (pragmas, migrations).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

export type Dialect = DatabaseConfig['kind'];

export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(db as Kysely<unknown>);
  return { db, dialect: 'sqlite' };
}

// Fresh databases for tests, on each backend: a temporary SQLite file, or a new PostgreSQL database
// on 127.0.0.1:5432 (created per test, dropped after), so that every test owns its data.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, vi } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/storage/database.js';
import type { OpenDatabase, OpenOptions } from '../../src/storage/handle.js';
import type { Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { tempDir } from './app.js';

/** The server's maintenance database; the test databases are created beside it. */
export const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface FreshDatabase {
  readonly config: DatabaseConfig;
  /** The DATABASE_URL of it. */
  readonly url: string;
  drop(): Promise<void>;
}

/** Runs `sql` on the server's maintenance database (creating, altering or dropping test databases). */
export async function postgresAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function freshPostgres(): Promise<FreshDatabase> {
  const name = `studio_inquiry_test_${randomBytes(6).toString('hex')}`;
  await postgresAdmin(`CREATE DATABASE ${name}`);
  const url = POSTGRES_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return { config: { kind: 'postgres', url }, url, drop: () => postgresAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function freshSqlite(): Promise<FreshDatabase> {
  const dir = tempDir();
  const path = join(dir, 'studio.db');
  return { config: { kind: 'sqlite', path }, url: `sqlite:${path}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * For the tests of a describe block: `open()` gives a store on a fresh database (made by `fresh`),
 * which is closed and dropped after the test, once its spies are restored.
 */
export function storePerTest(fresh: () => Promise<FreshDatabase>) {
  let store: Store | undefined;
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await store?.close().catch(() => {});
    await database?.drop();
    store = undefined;
    database = undefined;
  });
  return {
    async open(options: OpenOptions = {}): Promise<{ store: Store; database: FreshDatabase; opened: OpenDatabase }> {
      database = await fresh();
      const opened = await openDatabase(database.config, options);
      store = createStore(opened);
      return { store, database, opened };
    },
  };
}

export const BACKENDS = [
  { name: 'SQLite', fresh: freshSqlite },
  { name: 'PostgreSQL', fresh: freshPostgres },
] as const;

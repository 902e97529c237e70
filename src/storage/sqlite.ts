// Opens a SQLite file as a Kysely handle: WAL, durable commits, transactions that take the write
// lock at their begin, prepared statements kept, and the file's identity checked before commits.
import { chmodSync, closeSync, linkSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, type DialectAdapter, type Driver, Kysely, SqliteAdapter, SqliteDialect } from 'kysely';
import type { OpenDatabase } from './handle.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';
import { fileIdentityCheck } from './sqlite-file-identity.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/** The longest pause between two tries of a `begin` that found the lock taken. */
const SQLITE_BEGIN_MAX_PAUSE_MS = 20;

/** How long a connection waits for another writer's lock before failing (SQLite busy_timeout). */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * Transactions begin immediate, taking the write lock at once: a deferred one that read first
 * fails with SQLITE_BUSY if another process (the CLI) wrote meanwhile. `begin` is retried here, off
 * the event loop, with busy_timeout 0 (better-sqlite3 sleeps on the event loop); once held, nothing waits.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly checkFile: () => void,
  ) {
    super({ database: withStatementCache(sqlite, checkFile) });
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const { sqlite, checkFile } = this;
    const commit = driver.commitTransaction.bind(driver);
    // Nothing is committed to a file that is no longer the database's (see fileIdentityCheck).
    driver.commitTransaction = async (connection) => {
      checkFile();
      await commit(connection);
    };
    // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR, …): a second
    // rollback would throw "no transaction is active" in place of the error that says what went wrong.
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (sqlite.inTransaction) await rollback(connection);
    };
    driver.beginTransaction = async (connection) => {
      const deadline = performance.now() + SQLITE_BUSY_TIMEOUT_MS;
      for (let pauseMs = 1; ; pauseMs = Math.min(2 * pauseMs, SQLITE_BEGIN_MAX_PAUSE_MS)) {
        await connection.executeQuery(CompiledQuery.raw('pragma busy_timeout = 0'));
        try {
          await connection.executeQuery(CompiledQuery.raw('begin immediate'));
          return;
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || performance.now() >= deadline) throw error;
        } finally {
          await connection.executeQuery(CompiledQuery.raw(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`));
        }
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    };
    return driver;
  }
}

/**
 * SQLite runs schema changes inside a transaction, which Kysely's adapter denies: said so, the
 * migrator applies the pending migrations and their records in one transaction, whole or not at
 * all, and a second process starting meanwhile waits for it, then finds nothing left to do.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** The database and its -wal and -shm files: readable by the service's user alone. */
const PRIVATE_FILE = 0o600;
/** A folder the service creates for its database. */
const PRIVATE_FOLDER = 0o700;

/**
 * Creates the database file 0600 if it is not there, and takes group and other access away from it
 * and its -wal and -shm if they have any: SQLite gives those the database file's mode.
 */
function makePrivate(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_FOLDER });
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE)); // an empty file is an empty SQLite database
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, PRIVATE_FILE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** Opens (creating it if need be, private to the service's user) and migrates the SQLite database at `path`. */
export async function openSqlite(path: string): Promise<OpenDatabase> {
  if (path !== ':memory:') makePrivate(path);
  const sqlite = new SQLite(path);
  // WAL lets readers (health, CLI) run beside the writer.
  sqlite.pragma('journal_mode = WAL');
  const database = connectSqlite(sqlite);
  try {
    await migrateToLatest(database.db as Kysely<unknown>);
  } catch (error) {
    await database.db.destroy(); // closes the file: a caller that goes on (a test, the CLI) holds no handle
    throw error;
  }
  return database;
}

/** Opens an existing SQLite file as it is: nothing created, converted or migrated (openExistingDatabase). */
export function openExistingSqlite(path: string): OpenDatabase {
  const sqlite = new SQLite(path, { fileMustExist: true });
  try {
    return connectSqlite(sqlite);
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** A Kysely handle on an open SQLite file, with the settings every connection of the service has. */
function connectSqlite(sqlite: SQLite.Database): OpenDatabase {
  // Every commit is on disk before it returns: what an inquiry answered 200 is promised.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  // Deleted rows are overwritten with zeros in the file, whichever connection deletes them: an erased
  // person leaves nothing for `strings` to find once the write-ahead log is emptied (personal-data-store.ts).
  sqlite.pragma('secure_delete = on');
  const checkFile = fileIdentityCheck(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite, checkFile) });
  const probe = sqlite.prepare('select 1');
  // Throws once the database is closed, like any other query, or once its file is gone.
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      probe.get();
      checkFile();
    },
    backup: (destination) => backupSqlite(sqlite, destination),
  };
}

/**
 * SQLite's online backup into `destination`, which must not exist: written 0600 beside it first and
 * renamed once whole, so that no half-written copy ever has the name. Writers go on meanwhile.
 */
async function backupSqlite(sqlite: SQLite.Database, destination: string): Promise<void> {
  const partial = `${destination}.partial`;
  closeSync(openSync(partial, 'wx', PRIVATE_FILE));
  try {
    await sqlite.backup(partial);
    chmodSync(partial, PRIVATE_FILE);
    linkSync(partial, destination); // fails if the destination appeared meanwhile: never overwritten
  } finally {
    rmSync(partial, { force: true });
  }
}

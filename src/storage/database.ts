// Opens the configured database as a Kysely handle and prepares it (pragmas, migrations).
import { createHash } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DialectAdapter,
  type Driver,
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  type RootOperationNode,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
  sql,
  type UnknownRow,
} from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

export type Dialect = DatabaseConfig['kind'];

export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /**
   * The cheapest round trip to the database, for the health check: straight to the driver, since
   * going through Kysely's connection provider and compiler costs more than the query itself.
   */
  readonly ping: () => Promise<void>;
}

/** Distinct SQL texts kept prepared; the service issues a few dozen, IN-lists of varying length add more. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query anew, which costs as much as running it. The same few
 * statements run for every inquiry, so keep them prepared (least recently used ones are dropped).
 * Safe because Kysely runs one query at a time on the single connection and never streams here.
 * A statement that writes outside a transaction (it commits by itself: a revocation, a lease
 * renewal) first runs `beforeAutocommit`, as a transaction's commit does (ImmediateSqliteDialect).
 */
function withStatementCache(sqlite: SQLite.Database, beforeAutocommit: () => void): SqliteDatabase {
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

/**
 * SQLite transactions that take the write lock when they begin (`begin immediate`), not at their
 * first write. Every transaction here writes, and most read first (an intake batch looks up keys
 * and fingerprints, then inserts). Begun deferred, such a transaction fails at once with
 * SQLITE_BUSY when another process (the CLI) wrote meanwhile, since its snapshot is stale and
 * waiting cannot help: beside a `requeue --all`, a third of the inquiries sent were answered 500.
 * Begun immediate, it waits for the other writer, then reads the latest state.
 *
 * It waits here, between tries, not in SQLite's busy handler: better-sqlite3 runs that handler's
 * sleeps on the event loop, so another process holding the lock for a second (a `VACUUM`, the
 * sqlite3 shell) froze the whole service, health checks included, for that second. Only `begin`
 * gives up at once (busy_timeout 0 around it); once a transaction holds the lock, nothing in it waits.
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
    // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR, …): a
    // rollback then fails with "no transaction is active", which Kysely would throw in place of
    // the error that says what went wrong (the disk is full).
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
 * SQLite runs schema changes inside a transaction like any other write, but Kysely's adapter says
 * it does not, and its migrator then runs each migration and its record without one: a process
 * killed in the middle of a migration (an upgrade scanning a large table, stopped by a deploy) left
 * the migration half done and unrecorded, and every later start failed on it ("table … already
 * exists"). Said so, the migrator runs the pending migrations and their records in one
 * transaction (begun immediate, below): an upgrade is applied whole or not at all, and a second
 * process starting on the same file meanwhile waits for it (up to the busy timeout), then finds
 * nothing left to do.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** The longest pause between two tries of a `begin` that found the lock taken. */
const SQLITE_BEGIN_MAX_PAUSE_MS = 20;

/** How long a connection waits for another writer's lock before failing (SQLite busy_timeout). */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  /** Told of database connections that break (PostgreSQL); the pool replaces them by itself. */
  readonly logger?: Pick<Logger, 'warn'>;
  /** How long a PostgreSQL connection is used before it is replaced (60 s by default, see POSTGRES_CONNECTION_LIFETIME_SECONDS). */
  readonly connectionLifetimeSeconds?: number;
}

export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (config.kind === 'postgres') return openPostgres(config.url, options);
  if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
  const sqlite = new SQLite(config.path);
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

/**
 * Opens a database the service has set up, as it is: nothing is created (a SQLite file must
 * exist), converted (its journal mode is left alone) or migrated. For the CLI, which reads the
 * schema's version (readSchemaVersion) before anything else and refuses one it was not built for:
 * migrating is the service's part (README, "Upgrades").
 */
export async function openExistingDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (config.kind === 'postgres') return connectPostgres(config.url, options);
  const sqlite = new SQLite(config.path, { fileMustExist: true });
  try {
    return connectSqlite(sqlite);
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** A Kysely handle on an open SQLite file, with the settings every connection of the service has. */
function connectSqlite(sqlite: SQLite.Database): OpenDatabase {
  // synchronous=FULL makes every commit durable on disk before it returns, which is what
  // "answered 200" promises (CONTRACT.md).
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
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
  };
}

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
 * A check that the file at the database's path is still the one this connection has open. Deleted
 * (its directory removed) or replaced (a backup moved over it), the open file lives on unnamed:
 * writes still succeed, and are gone at the next start, which opens whatever the path names now.
 * Checked before every commit and by the health check, it turns answers that would have been 200s
 * for lost inquiries into 500s, and health into 503. An in-memory database has no file to check.
 */
function fileIdentityCheck(sqlite: SQLite.Database): () => void {
  if (sqlite.memory) return () => {};
  const opened = statSync(sqlite.name);
  return () => {
    const now = statSync(sqlite.name, { throwIfNoEntry: false });
    if (now?.ino !== opened.ino || now.dev !== opened.dev) throw new DatabaseFileGoneError(sqlite.name);
  };
}

/** Connections per process; a few suffice because group commit batches the writes. */
const POSTGRES_POOL_SIZE = 10;
const PG_INT8_OID = 20;
const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
/** Far above any query of the service's (group-committed batches take milliseconds). */
const POSTGRES_QUERY_TIMEOUT_MS = 30_000;
const POSTGRES_KEEPALIVE_MS = 10_000;
/**
 * A session left inside a transaction this long is ended by the server, and with it the locks it
 * holds: a backstop for a connection whose instance stopped answering (a partition) mid-transaction.
 * The service's transactions take milliseconds and never wait on anything but the database.
 */
const POSTGRES_IDLE_IN_TRANSACTION_MS = 60_000;
/** The health check answers 503 rather than keep a load balancer waiting. */
const PING_TIMEOUT_MS = 2_000;
/**
 * A connection keeps what its session began with: one opened while the database was read-only
 * (set so by hand, or a standby before its promotion) refuses every write, and one opened before a
 * failover may still reach the old server by its address. The pool closes idle connections after
 * 10 s, but under steady use they are never idle: each is replaced after this long instead (once
 * it is released), so such a state lasts a minute at most. A new connection costs a few milliseconds.
 */
const POSTGRES_CONNECTION_LIFETIME_SECONDS = 60;

/** Times are milliseconds in BIGINT columns: far below 2^53, so they read back as numbers. */
const POSTGRES_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === PG_INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

function postgresPool(url: string, options: pg.PoolConfig, { logger }: OpenOptions): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, types: POSTGRES_TYPES, ...options });
  const broke = (error: Error) => logger?.warn({ err: error }, 'a database connection broke; the pool opens a new one when needed');
  // A connection that breaks (the server stopped or restarted) must not crash the process. Idle
  // ones are reported on the pool, which drops them. One checked out (inside a transaction,
  // between two queries) emits 'error' on the client, where pg-pool listens only while it is
  // idle: without a listener of our own that event is thrown. Its query or transaction fails on its
  // own, and the pool discards the broken client when it is released; the next query opens a new one.
  pool.on('error', broke);
  pool.on('connect', (client) => client.on('error', broke));
  return pool;
}

/** The pool behind each PostgreSQL handle opened here: a locked transaction takes its connection straight from it. */
const pools = new WeakMap<Kysely<Database>, pg.Pool>();

async function openPostgres(url: string, options: OpenOptions): Promise<OpenDatabase> {
  // Migrations run on a connection of their own, without the query timeout below: building an
  // index on a large table may take longer than any query of the running service.
  const migrator = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: postgresPool(url, { max: 1, connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS }, options) }),
  });
  try {
    await migrateToLatest(migrator);
  } finally {
    await migrator.destroy();
  }
  return connectPostgres(url, options);
}

/** The service's pool of connections to a PostgreSQL database, as a Kysely handle. */
function connectPostgres(url: string, options: OpenOptions): OpenDatabase {
  const pool = postgresPool(
    url,
    {
      max: POSTGRES_POOL_SIZE,
      // A server that stops answering (a partition, a failover that leaves the old address silent)
      // must fail queries in bounded time, not after TCP's own timeouts (minutes to hours): health
      // answers 503, the worker retries, and shutdown stays within its deadline.
      connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      query_timeout: POSTGRES_QUERY_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: POSTGRES_KEEPALIVE_MS,
      idle_in_transaction_session_timeout: POSTGRES_IDLE_IN_TRANSACTION_MS,
      maxLifetimeSeconds: options.connectionLifetimeSeconds ?? POSTGRES_CONNECTION_LIFETIME_SECONDS,
      // Queries go out without waiting for the answer to the one before (pg's pipeline mode), so
      // a transaction can send several in one round trip (lockedPostgresTransaction). Queries
      // awaited one by one, as everywhere else, behave as without it.
      pipeline: true,
    },
    options,
  );
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  // pg reads a per-query query_timeout (client.js), though its types do not list it.
  const probe = { text: 'select 1', query_timeout: PING_TIMEOUT_MS } as pg.QueryConfig;
  return { db, dialect: 'postgres', ping: async () => void (await pool.query(probe)) };
}

export interface TransactionOptions {
  /** Durable (the default) unless the results may be lost with the machine's power (see inTransaction). */
  readonly durable?: boolean;
  /**
   * Names that concurrent transactions deciding about the same thing (an inquiry's fingerprint, an
   * idempotency key, the first signing key) must not decide about at once, across processes: on
   * PostgreSQL, transaction-level advisory locks taken before `work` runs, so that its first
   * statement already sees what a transaction that held them committed. On SQLite, where one
   * transaction writes at a time, there is nothing to do.
   */
  readonly lock?: readonly string[];
  /** How long the locks may be waited for before the transaction fails (LOCK_TIMEOUT_MS by default). */
  readonly lockTimeoutMs?: number;
}

/**
 * Far above any intake batch (milliseconds), and below the query timeout: PostgreSQL itself gives
 * up waiting, so the connection goes back to the pool clean. The client-side query timeout alone
 * would close the connection (pg does so in pipeline mode) and leave the statement waiting on the
 * server until it notices.
 */
const LOCK_TIMEOUT_MS = 10_000;

/**
 * Runs `work` in a transaction. A durable one (the default) is on disk when it commits: what the
 * service promised someone (an inquiry answered 200, a token issued). On SQLite a non-durable one
 * (WAL with synchronous=NORMAL) survives a crash of the process but may be lost, with the last
 * moments before it, if the machine itself loses power: for the delivery worker's bookkeeping
 * (claims, attempt records), where such a loss costs at most a message sent again, it saves a disk
 * sync per commit, which better-sqlite3 would otherwise wait for on the event loop. PostgreSQL
 * commits are always durable: its asynchronous commit loses transactions on a crash of the
 * database server, not only of the machine, and a failover is the case several instances are for.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  dialect: Dialect,
  work: (trx: Kysely<Database>) => Promise<T>,
  { durable = true, lock = [], lockTimeoutMs = LOCK_TIMEOUT_MS }: TransactionOptions = {},
): Promise<T> {
  if (dialect === 'postgres') {
    // Read committed whatever the server's default: a statement that waited for a row another
    // transaction held sees what that one committed (claims.complete relies on it) instead of
    // failing with a serialization error.
    return lock.length > 0
      ? lockedPostgresTransaction(db, lock, lockTimeoutMs, work)
      : db.transaction().setIsolationLevel('read committed').execute(work);
  }
  if (durable) return db.transaction().execute(work);
  // The setting belongs to the connection: hold SQLite's one connection while it is lowered.
  return db.connection().execute(async (connection) => {
    await sql`pragma synchronous = normal`.execute(connection);
    try {
      return await connection.transaction().execute(work);
    } finally {
      await sql`pragma synchronous = full`.execute(connection);
    }
  });
}

/** PostgreSQL answered the COMMIT of a transaction in which a statement had failed with ROLLBACK. */
export class RolledBackError extends Error {
  constructor() {
    super('the transaction was rolled back: one of its statements failed');
  }
}

/**
 * A PostgreSQL transaction that holds advisory locks on `names` from its start, on a connection in
 * pipeline mode, so that it costs as few round trips as its work allows:
 * - `begin`, the lock timeout and the locks go out in one message (the simple query protocol takes
 *   several statements at once, but no parameters: only 64-bit integers computed here, and the
 *   timeout, a whole number of milliseconds, are written into that SQL, never a name), and it is
 *   not waited for: the first queries of `work` follow it in the same round trip. They run once
 *   the locks are held, so they already see what a transaction that held them committed;
 * - queries that `work` sends together (Promise.all) share a round trip: the handle it gets is
 *   bound to this one connection and does not queue them one behind the other, as a Kysely
 *   transaction does.
 * Once one statement fails, every later one of the transaction fails too, and PostgreSQL answers
 * `commit` with ROLLBACK: that is reported as a failure (RolledBackError), never as a commit. Where
 * `begin` itself failed (the lock timeout), that is the error reported, not what followed it.
 * Round trips to the database are a quarter of what a loaded instance spends its processor on
 * (docs/benchmarks.md, "Where the time goes").
 */
async function lockedPostgresTransaction<T>(
  db: Kysely<Database>,
  names: readonly string[],
  lockTimeoutMs: number,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const pool = pools.get(db);
  if (pool === undefined) throw new Error('a locked transaction needs a database opened by openDatabase');
  // Taken in ascending order (the sorted subquery is scanned in order), so two transactions locking
  // overlapping sets cannot deadlock.
  const ids = [...new Set(names.map(advisoryLockId))].join(',');
  const timeout = Math.max(1, Math.round(lockTimeoutMs));
  const begin =
    `begin isolation level read committed; set local lock_timeout = ${timeout}; ` +
    `select pg_advisory_xact_lock(id) from (select unnest('{${ids}}'::bigint[]) as id order by id) as sorted`;
  const client = await pool.connect();
  const ended = new EndedGuard();
  const handle = kyselyOn(client).withPlugin(ended);
  let result: T;
  try {
    sendTogether(client);
    const began = client.query(begin);
    began.catch(() => {}); // awaited below, after work's first queries have gone out behind it
    try {
      result = await work(handle);
    } catch (error) {
      await began; // its error, if it failed, is the cause of work's
      throw error;
    }
    await began;
    ended.end(); // from the moment `commit` goes out, a query on the handle would land outside it
    const committed = await client.query('commit');
    if (committed.command !== 'COMMIT') throw new RolledBackError();
  } catch (error) {
    ended.end();
    // Queued behind whatever is still in flight, so once it is answered nothing is. A connection
    // that cannot roll back (gone, or timed out and being closed) is not given back for reuse.
    let unfit: Error | undefined;
    await client.query('rollback').catch((rollbackError: Error) => {
      unfit = rollbackError;
    });
    client.release(unfit);
    throw error;
  }
  client.release();
  return result;
}

/**
 * Refuses the queries of a transaction's handle once the transaction is ending: from its `commit`
 * or `rollback` on, a query left behind (one that was not awaited) would run outside it, on a
 * connection soon back in the pool, perhaps in another transaction by then. It guards what Kysely
 * compiles (the builder, `sql` templates); a query compiled beforehand and run with
 * `executeQuery` passes no plugin, and nothing here does that.
 */
class EndedGuard implements KyselyPlugin {
  #ended = false;
  end(): void {
    this.#ended = true;
  }
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (this.#ended) throw new Error('a query on the handle of a transaction that has ended');
    return node;
  }
  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** A Kysely handle on one checked-out connection, that sends each query as soon as it is made. */
const onConnection = new WeakMap<pg.PoolClient, Kysely<Database>>();

function kyselyOn(client: pg.PoolClient): Kysely<Database> {
  let db = onConnection.get(client);
  if (db === undefined) {
    // The connection is released by lockedPostgresTransaction, not by Kysely after each query.
    // Queries made together reach it in whatever order Kysely's steps bring them: the intake's
    // inserts need none, since their references are checked at commit (migration 005).
    const connection = {
      query: (...args: Parameters<pg.PoolClient['query']>) => {
        sendTogether(client);
        return client.query(...args);
      },
      release: () => {},
    } as unknown as pg.PoolClient;
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => connection, end: async () => {} } }) });
    onConnection.set(client, db);
  }
  return db;
}

/**
 * Queries sent on `client` from now until the current burst of promise callbacks has run out go to
 * the socket in one write. pg writes each query in a write of its own, and on a connection to a
 * local server each write is a system call that also wakes the database's process: a round of
 * four queries sent as one costs both sides a quarter of that. The write is held back no longer
 * than it takes the queries made together (Promise.all, each a chain of promise callbacks) to be
 * made: a `process.nextTick` queued from a promise callback runs once none is left.
 */
function sendTogether(client: pg.PoolClient): void {
  const { stream } = client.connection;
  if (stream.writableCorked > 0) return; // a round already being gathered
  stream.cork();
  process.nextTick(() => stream.uncork());
}

/** A PostgreSQL advisory lock id for a name: a signed 64-bit integer, as decimal digits. */
function advisoryLockId(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

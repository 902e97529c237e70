// Opens a PostgreSQL database as a Kysely handle over a pg pool: migrated on a connection of its
// own, then queried with bounded timeouts, pipelined connections and a limited connection lifetime.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { OpenDatabase, OpenOptions } from './handle.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

/** Connections per process; a few suffice because group commit batches the writes. */
const POSTGRES_POOL_SIZE = 10;
const PG_INT8_OID = 20;
const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
/** Far above any query of the service's (group-committed batches take milliseconds). */
const POSTGRES_QUERY_TIMEOUT_MS = 30_000;
const POSTGRES_KEEPALIVE_MS = 10_000;
/**
 * The server ends a session left this long inside a transaction, and its locks: a backstop for an
 * instance that stopped answering mid-transaction. The service's transactions take milliseconds.
 */
const POSTGRES_IDLE_IN_TRANSACTION_MS = 60_000;
/** The health check answers 503 rather than keep a load balancer waiting. */
const PING_TIMEOUT_MS = 2_000;
/**
 * A connection keeps what its session began with (opened while the database was read-only, or
 * before a failover, it refuses writes or reaches the old server): under steady use connections
 * are never idle, so each is replaced after this long instead.
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
  // A broken connection must not crash the process. pg-pool listens to a client's 'error' only
  // while it is idle, so one checked out needs a listener of its own; its query fails by itself,
  // and the pool discards it when it is released.
  pool.on('error', broke);
  pool.on('connect', (client) => client.on('error', broke));
  return pool;
}

/** The pool behind each PostgreSQL handle opened here: a locked transaction takes its connection straight from it. */
const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/** The pool behind a handle of connectPostgres, if it is one. */
export function poolOf(db: Kysely<Database>): pg.Pool | undefined {
  return pools.get(db);
}

/** Migrates the database, then opens the service's pool on it. */
export async function openPostgres(url: string, options: OpenOptions): Promise<OpenDatabase> {
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
export function connectPostgres(url: string, options: OpenOptions): OpenDatabase {
  const pool = postgresPool(
    url,
    {
      max: POSTGRES_POOL_SIZE,
      // A server that stops answering must fail queries in bounded time, not after TCP's own
      // timeouts: health answers 503, the worker retries, shutdown stays within its deadline.
      connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      query_timeout: POSTGRES_QUERY_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: POSTGRES_KEEPALIVE_MS,
      idle_in_transaction_session_timeout: POSTGRES_IDLE_IN_TRANSACTION_MS,
      maxLifetimeSeconds: options.connectionLifetimeSeconds ?? POSTGRES_CONNECTION_LIFETIME_SECONDS,
      // Queries go out without waiting for the previous answer (pg's pipeline mode), so a
      // transaction can send several in one round trip; queries awaited one by one behave as without.
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

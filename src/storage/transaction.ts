// Transactions on either database: durable or not, and with named locks on PostgreSQL.
import { type Kysely, sql } from 'kysely';
import type { Dialect, TransactionOptions } from './ports.js';
import { lockedPostgresTransaction } from './postgres-locked-transaction.js';
import type { Database } from './schema.js';

/**
 * Far above any intake batch, and below the query timeout: PostgreSQL itself gives up waiting, so
 * the connection goes back to the pool clean (pg's client-side timeout would close it instead).
 */
const LOCK_TIMEOUT_MS = 10_000;

/**
 * Runs `work` in a transaction, durable unless `durable: false`: on SQLite (synchronous=NORMAL) that
 * survives a process crash but not a power loss, for the worker's bookkeeping, where a loss costs at
 * most a message sent again. PostgreSQL commits are always durable.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  dialect: Dialect,
  work: (trx: Kysely<Database>) => Promise<T>,
  { durable = true, lock = [], lockTimeoutMs = LOCK_TIMEOUT_MS }: TransactionOptions = {},
): Promise<T> {
  if (dialect === 'postgres') {
    // Read committed whatever the server's default: a statement that waited for a row another
    // transaction held sees what that one committed (claims.complete relies on it).
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

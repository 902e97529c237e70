// A PostgreSQL transaction that holds advisory locks from its start and costs as few round trips
// as its work allows: its begin, lock timeout and locks, and its queries made together, are sent
// without waiting for one another's answers (pg's pipeline mode).
import { createHash } from 'node:crypto';
import {
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type pg from 'pg';
import { poolOf } from './postgres.js';
import type { Database } from './schema.js';

/** PostgreSQL answered the COMMIT of a transaction in which a statement had failed with ROLLBACK. */
export class RolledBackError extends Error {
  constructor() {
    super('the transaction was rolled back: one of its statements failed');
  }
}

/**
 * Runs `work` holding advisory locks on `names`. `begin`, the timeout and the locks go out in one
 * simple-protocol message (only integers computed here are written into it, never a name), not
 * awaited: `work`'s first queries follow in the same round trip, and run once the locks are held.
 */
export async function lockedPostgresTransaction<T>(
  db: Kysely<Database>,
  names: readonly string[],
  lockTimeoutMs: number,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const pool = poolOf(db);
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
      await began; // its error, if it failed (the lock timeout), is the cause of work's
      throw error;
    }
    await began;
    ended.end(); // from the moment `commit` goes out, a query on the handle would land outside it
    // After a failed statement PostgreSQL answers `commit` with ROLLBACK: a failure, never a commit.
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
 * Refuses the queries of a transaction's handle once it is ending: a query left behind would run
 * outside it, on a connection soon back in the pool. It guards what Kysely compiles; a query run
 * with `executeQuery` passes no plugin, and nothing here does that.
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
    // Released by lockedPostgresTransaction, not by Kysely after each query. Queries made together
    // may arrive in any order: the intake's inserts are checked at commit (migration 005).
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
 * Queries sent on `client` until the current burst of promise callbacks has run out go to the
 * socket in one write (one system call, one wake-up of the server), not one each: a
 * `process.nextTick` queued from a promise callback runs once none is left.
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

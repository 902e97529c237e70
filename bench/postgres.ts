// The PostgreSQL mode of `npm run bench -- --postgres`: durable intake (committed before the 200)
// on a fresh PostgreSQL database, with one instance and then two instances on the same database
// (the load split between them), beside the SQLite figure of the same run.
import pg from 'pg';
import { freePort, LOOPBACK, type ServerProcess, startServerProcess, waitForHealth } from './processes.js';

/** The server's maintenance database; the bench database is created beside it and dropped after. */
const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TARGET_POSTGRES_INQUIRIES_PER_S = 3_000;

export interface ContactFigures {
  readonly acceptedPerS: number;
  readonly p99: number;
}

export interface PostgresBench {
  readonly url: string;
  readonly instances: ServerProcess[];
  /** Starts one more service instance on the database and waits until it is healthy. */
  addInstance(): Promise<ServerProcess>;
  /**
   * Brings the database to the same state before each load (after the drain, which it does not
   * count): vacuumed and checkpointed, so that neither autovacuum nor a checkpoint forced by the last
   * load's row-by-row updates and WAL lands in the middle of the next one.
   */
  settle(): Promise<void>;
  /**
   * One past the newest finished transaction id (`pg_snapshot_xmax`, assigning none): the difference
   * across a load counts the transactions that wrote (server-wide, a few in flight either side), read
   * at once where `pg_stat_database` counts a session's commits only once it reports them.
   */
  transactionIdHorizon(): Promise<number>;
  /** Drops the database (after the instances have stopped). */
  drop(): Promise<void>;
}

async function admin(sql: string, connectionString = POSTGRES_ADMIN_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Creates a fresh database; instances are added one by one (the first runs the migrations), each
 * started with node and `serviceArgs` (the service's entry point, after any BENCH_SERVICE_NODE_ARGS).
 */
export async function createPostgresBench(
  env: Record<string, string>,
  root: string,
  timeoutMs: number,
  serviceArgs: readonly string[],
): Promise<PostgresBench> {
  const name = `studio_inquiry_bench_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = POSTGRES_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  const instances: ServerProcess[] = [];
  return {
    url,
    instances,
    async addInstance() {
      const port = await freePort();
      const instance = startServerProcess(
        `postgres instance ${instances.length + 1}`,
        serviceArgs,
        { ...env, PORT: String(port), HOST: LOOPBACK, DATABASE_URL: url },
        port,
        root,
      );
      instances.push(instance);
      await waitForHealth(instance, timeoutMs);
      return instance;
    },
    async settle() {
      await admin('VACUUM (ANALYZE)', url);
      await admin('CHECKPOINT');
    },
    async transactionIdHorizon() {
      const { rows } = await admin('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS horizon');
      return Number(rows[0].horizon);
    },
    async drop() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

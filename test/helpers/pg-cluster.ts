// A private, throwaway PostgreSQL cluster for a test that must stop and start its server: the shared
// server on 127.0.0.1:5432 serves every other test file in parallel, so it is never restarted.
// initdb and postgres refuse to run as root, so as root they run as the `postgres` OS user.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';

const run = promisify(execFile);

const POSTGRES_LIB = '/usr/lib/postgresql';
/** How long pg_ctl waits for the server to start or stop. */
const PG_CTL_TIMEOUT_SECONDS = 30;

export interface PgCluster {
  readonly port: number;
  /** The DATABASE_URL of its `postgres` database. */
  readonly url: string;
  /** Starts the server (again) on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** `fast`: disconnects clients and shuts down cleanly; `immediate`: as a crash would. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server if it runs and deletes every file of the cluster. */
  destroy(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL installed (Debian layout: /usr/lib/postgresql/<version>/bin). */
function binDir(): string {
  const versions = existsSync(POSTGRES_LIB) ? readdirSync(POSTGRES_LIB).filter((name) => /^\d+$/.test(name)) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a)).find((version) => existsSync(join(POSTGRES_LIB, version, 'bin', 'initdb')));
  if (newest === undefined) throw new Error(`no PostgreSQL server binaries under ${POSTGRES_LIB}`);
  return join(POSTGRES_LIB, newest, 'bin');
}

async function idOf(flag: '-u' | '-g', user: string): Promise<number> {
  return Number((await run('id', [flag, user])).stdout.trim());
}

export async function createPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);

  const dir = mkdtempSync(join(tmpdir(), 'studio-inquiry-pg-'));
  if (asRoot) chownSync(dir, await idOf('-u', 'postgres'), await idOf('-g', 'postgres'));
  const data = join(dir, 'data');
  const port = await freePort();
  let running = false;

  const cluster: PgCluster = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      // TCP on loopback only, and the unix socket inside the cluster's own directory.
      const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`;
      await pgRun('pg_ctl', [
        'start',
        '-D',
        data,
        '-w',
        '-t',
        String(PG_CTL_TIMEOUT_SECONDS),
        '-l',
        join(dir, 'server.log'),
        '-o',
        options,
      ]);
      running = true;
    },
    async stop(mode = 'fast') {
      await pgRun('pg_ctl', ['stop', '-D', data, '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), '-m', mode]);
      running = false;
    },
    async destroy() {
      try {
        if (running) await cluster.stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };

  try {
    // --no-sync only skips initdb's own final fsync; the running server keeps fsync on.
    await pgRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

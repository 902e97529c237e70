// An open database as the implementations see it: a Kysely handle, its dialect and a health probe.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from './ports.js';
import type { Database } from './schema.js';

export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** The cheapest round trip to the database, for the health check: straight to the driver, not through Kysely. */
  readonly ping: () => Promise<void>;
  /** SQLite only: a consistent copy of the database at `destination` (a new file), taken while it is in use. */
  readonly backup?: (destination: string) => Promise<void>;
}

export interface OpenOptions {
  /** Told of database connections that break (PostgreSQL); the pool replaces them by itself. */
  readonly logger?: Pick<Logger, 'warn'>;
  /** How long a PostgreSQL connection is used before it is replaced (POSTGRES_CONNECTION_LIFETIME_SECONDS by default). */
  readonly connectionLifetimeSeconds?: number;
}

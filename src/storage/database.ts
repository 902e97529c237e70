// Opens the configured database (SQLite or PostgreSQL) as a Kysely handle, prepared and migrated.
import type { DatabaseConfig } from '../config.js';
import type { OpenDatabase, OpenOptions } from './handle.js';
import { connectPostgres, openPostgres } from './postgres.js';
import { openExistingSqlite, openSqlite } from './sqlite.js';

export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (config.kind === 'postgres') return openPostgres(config.url, options);
  return openSqlite(config.path);
}

/**
 * Opens a database the service has set up, as it is: nothing created (a SQLite file must exist),
 * converted or migrated. For the CLI, which checks the schema's version (readSchemaVersion) first:
 * migrating is the service's part (docs/operations.md).
 */
export async function openExistingDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (config.kind === 'postgres') return connectPostgres(config.url, options);
  return openExistingSqlite(config.path);
}

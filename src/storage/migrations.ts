// Schema migrations (migration-steps.ts), run on every start (already applied ones are skipped),
// and the schema version a database records.
import { DEFAULT_MIGRATION_TABLE, type Kysely, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';
import { MIGRATIONS as migrations } from './migration-steps.js';
import type { SchemaVersion } from './ports.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  // Read first: a database already up to date needs no write lock to start (on SQLite the
  // migrator's transaction would wait for another process's writes and fail the start). Pending or
  // unknown migrations go to the migrator, which applies or refuses them.
  const { applied, expected } = await readSchemaVersion(db);
  if (applied.length === expected.length && applied.every((name, i) => name === expected[i])) return;
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  // Kysely's words for a database that a newer release has migrated: this one must not start on it.
  const unknown = /previously executed migration (\S+) is missing/.exec(error instanceof Error ? error.message : '')?.[1];
  if (unknown) {
    throw new Error(
      `DATABASE_URL: the database has migration ${unknown}, which this release does not know: a newer release has upgraded it (see docs/operations.md, "Upgrades and migrations")`,
      { cause: error },
    );
  }
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed`, { cause: error });
  }
}

/**
 * Reads which migrations a database records (Kysely's migration table), changing nothing: a
 * database without that table records none. The service migrates as it starts; the CLI only
 * checks, so that it never upgrades a schema under running instances of an older release.
 */
export async function readSchemaVersion(db: Kysely<unknown>): Promise<SchemaVersion> {
  const expected = Object.keys(migrations).sort();
  // On PostgreSQL the table is looked for as the migrator's unqualified queries find it: along the
  // search path. SQLite answers 0 or 1, PostgreSQL false or true.
  const table = sql.lit(DEFAULT_MIGRATION_TABLE);
  const found =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? sql<{ present: unknown }>`select to_regclass(${table}) is not null as present`
      : sql<{ present: unknown }>`select count(*) > 0 as present from sqlite_master where type = 'table' and name = ${table}`;
  const [answer] = (await found.execute(db)).rows;
  if (!answer?.present) return { applied: [], expected };
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)} order by name`.execute(db);
  return { applied: rows.map((row) => row.name), expected };
}

// Opens the inbox that DATABASE_URL names, for the CLI: as it is, never created or migrated (the
// service migrates as it starts), and refused in one line when it cannot be opened, holds no inbox,
// or holds one of another release's schema.
import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import type { OpenDatabase } from '../storage/handle.js';
import type { PersonalDataStore } from '../storage/personal-data-ports.js';
import type { SchemaVersion, Store } from '../storage/ports.js';
import type { InboxStore } from '../storage/ports-inbox.js';
import { systemErrorText } from './format.js';

/** Why the CLI will not work on the database DATABASE_URL names: one line, exit code 1. */
export class InboxError extends Error {}

/** The inbox's store, and its part that finds and erases one person's data. */
export interface Inbox {
  readonly store: Store;
  readonly personalData: PersonalDataStore;
  readonly inboxStore: InboxStore;
}

/**
 * The inbox, or an InboxError. Every command refuses a schema older or newer than this
 * release's: migrating would stop the older instances still running (docs/operations.md), and a
 * newer schema cannot be read or written reliably.
 */
export async function openInbox(config: DatabaseConfig): Promise<Inbox> {
  // Opening a SQLite path creates the file. For the server that is the first start; for the CLI it
  // almost always means the wrong directory or DATABASE_URL, and an empty new inbox would hide that.
  if (config.kind === 'sqlite' && config.path !== ':memory:' && !existsSync(config.path)) {
    throw new InboxError(`no database at ${config.path} (set DATABASE_URL or change directory)`);
  }
  // Loaded here rather than at the top: the storage modules take most of the start-up time, which
  // `help` and a mistyped option should not wait for.
  const [{ openExistingDatabase }, { readSchemaVersion }, { createStore }, { createPersonalDataStore }, { createInboxStore }] =
    await Promise.all([
      import('../storage/database.js'),
      import('../storage/migrations.js'),
      import('../storage/store.js'),
      import('../storage/personal-data-store.js'),
      import('../storage/inbox-store.js'),
    ]);
  let database: OpenDatabase;
  let version: SchemaVersion;
  try {
    database = await openExistingDatabase(config);
  } catch (error) {
    throw cannotOpen(error, config);
  }
  try {
    version = await readSchemaVersion(database.db as Kysely<unknown>);
  } catch (error) {
    await database.db.destroy();
    throw cannotOpen(error, config);
  }
  const problem = schemaProblem(version, where(config));
  if (problem !== undefined) {
    await database.db.destroy();
    throw new InboxError(problem);
  }
  return { store: createStore(database), personalData: createPersonalDataStore(database), inboxStore: createInboxStore(database) };
}

function cannotOpen(error: unknown, config: DatabaseConfig): InboxError {
  return new InboxError(withoutPassword(`cannot open the database: ${databaseErrorCause(error)}`, config));
}

/** What is wrong with the schema for this release, in words, or undefined when it is this release's. */
export function schemaProblem({ applied, expected }: SchemaVersion, where: string): string | undefined {
  const known = new Set(expected);
  const unknown = applied.filter((name) => !known.has(name));
  if (unknown.length === applied.length) return `no inbox at ${where} (no studio-inquiry tables); check the address`;
  // Releases only ever add migrations, so the number recorded is the schema's version.
  const versions = `the inbox's schema is at version ${applied.length}, this release`;
  if (unknown.length > 0) {
    return `${versions} knows up to ${expected.length}: a newer release has upgraded it (migration ${unknown[0]}); use that release's CLI`;
  }
  if (applied.length < expected.length) return `${versions} expects ${expected.length}: run the service once to upgrade it`;
  return undefined;
}

/** The database named without its password: a SQLite path, or a PostgreSQL database and server. */
function where(config: DatabaseConfig): string {
  if (config.kind === 'sqlite') return config.path;
  const url = new URL(config.url);
  return `database "${decodeURIComponent(url.pathname.slice(1))}" on ${url.host || 'localhost'}`;
}

/**
 * Why the database could not be opened or read, in one line: what the server, the network or
 * SQLite said (`database "x" does not exist`, `file is not a database`), never a stack trace.
 */
export function databaseErrorCause(error: unknown): string {
  // Node tries each address of a host name in turn (happy eyeballs) and reports them together.
  const first = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error;
  const { code, address, port, hostname } = (first ?? {}) as { code?: unknown; address?: unknown; port?: unknown; hostname?: unknown };
  const at = port === undefined ? `${address}` : `${address}:${port}`;
  if (address !== undefined) {
    if (code === 'ECONNREFUSED') return `connection refused at ${at}`;
    if (code === 'ETIMEDOUT') return `no answer from ${at}`;
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${at} is unreachable`;
  }
  if (hostname !== undefined) {
    if (code === 'ENOTFOUND') return `unknown host ${hostname}`;
    if (code === 'EAI_AGAIN') return `cannot look up the host ${hostname} (DNS did not answer)`;
  }
  return systemErrorText(first) || String(code ?? 'unknown error');
}

/** The line with the password of a PostgreSQL URL masked, in case a driver's message quotes the URL. */
export function withoutPassword(line: string, config: DatabaseConfig): string {
  if (config.kind !== 'postgres') return line;
  const url = new URL(config.url);
  const secrets = [url.password, decodeURIComponent(url.password), url.searchParams.get('password') ?? ''].filter(
    (secret) => secret !== '',
  );
  return secrets.reduce((text, secret) => text.split(secret).join('***'), line);
}

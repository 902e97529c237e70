// The Kysely handle behind an opaque Tx: the transaction's, or the database itself without one.
import type { Kysely, Transaction } from 'kysely';
import type { Tx } from './ports.js';
import type { Database } from './schema.js';

export type Executor = (tx?: Tx) => Kysely<Database>;

export function executorOn(db: Kysely<Database>): Executor {
  return (tx) => (tx as unknown as Transaction<Database> | undefined) ?? db;
}

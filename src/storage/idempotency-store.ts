// Idempotency keys: what each key's first request was answered, replayed to its repeats until it expires.
import type { Kysely } from 'kysely';
import { IN_PROCESS, inChunks } from './bulk.js';
import type { Executor } from './executor.js';
import { intakeFactsOnPostgres } from './intake-store.js';
import type { Dialect, IdempotencyEntry, IdempotencyStore } from './ports.js';
import * as onPostgres from './postgres-batch.js';
import { idempotencyKeyRow, toIdempotencyEntry } from './rows.js';
import type { Database } from './schema.js';

export function createIdempotencyStore(db: Kysely<Database>, q: Executor, dialect: Dialect): IdempotencyStore {
  const postgres = dialect === 'postgres';
  return {
    async findMany(keys, tx) {
      const found = new Map<string, IdempotencyEntry>();
      if (keys.length === 0) return found;
      if (postgres) return (await intakeFactsOnPostgres(q, { keys }, tx)).keys;
      const rows = await q(tx).selectFrom('idempotency_keys').selectAll().where('key', 'in', keys).execute();
      for (const row of rows) found.set(row.key, toIdempotencyEntry(row));
      return found;
    },
    async insertMany(entries, tx) {
      if (entries.length === 0) return;
      const rows = entries.map(idempotencyKeyRow);
      if (postgres) await onPostgres.insertIdempotencyKeys(q(tx), rows);
      else await q(tx).insertInto('idempotency_keys').values(rows).execute();
    },
    async deleteOlderThan(cutoff) {
      // In chunks (bulk.ts), so that a day's keys never hold SQLite's writer and the event loop long.
      return inChunks(IN_PROCESS, async (limit) => {
        const expired = db.selectFrom('idempotency_keys').select('key').where('created_at', '<', cutoff.getTime()).limit(limit);
        const result = await db.deleteFrom('idempotency_keys').where('key', 'in', expired).executeTakeFirst();
        // Deleted rows never match again, and new keys are not expired: each chunk takes the next ones.
        const deleted = Number(result.numDeletedRows);
        return { seen: deleted, changed: deleted };
      });
    },
  };
}

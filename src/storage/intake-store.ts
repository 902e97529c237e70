// An intake batch's reads and writes as one unit each: on PostgreSQL one statement each
// (postgres-batch.ts); on SQLite the methods of the inquiry, idempotency and outbox stores.
import type { Executor } from './executor.js';
import type { Dialect, IdempotencyStore, InquiryStore, IntakeFacts, IntakeQuery, IntakeStore, Outbox, Tx } from './ports.js';
import * as onPostgres from './postgres-batch.js';
import { idempotencyKeyRow, inboxReferences, inquiryDeliveries, inquiryRow, toIdempotencyEntry } from './rows.js';

/**
 * An intake's facts in the one statement of lookupIntake: on PostgreSQL the per-table reads go
 * through it too, with the lists they do not ask about left empty (one text, one fold rule).
 */
export async function intakeFactsOnPostgres(
  q: Executor,
  { keys = [], fingerprints = [], since = new Date(0), references = [] }: Partial<IntakeQuery>,
  tx?: Tx,
): Promise<IntakeFacts> {
  const facts: IntakeFacts = { keys: new Map(), recent: new Map(), taken: new Set() };
  for (const row of await onPostgres.lookupIntake(q(tx), { keys, fingerprints, since: since.getTime(), references })) {
    if (row.kind === 'key') facts.keys.set(row.key, toIdempotencyEntry(row));
    else if (row.kind === 'recent') facts.recent.set(row.key, row.reference);
    else facts.taken.add(row.reference);
  }
  return facts;
}

export function createIntakeStore(
  q: Executor,
  dialect: Dialect,
  { inquiries, idempotency, outbox }: { inquiries: InquiryStore; idempotency: IdempotencyStore; outbox: Outbox },
): IntakeStore {
  const postgres = dialect === 'postgres';
  return {
    async lookup(query, tx) {
      if (postgres) return intakeFactsOnPostgres(q, query, tx);
      const [keys, recent, taken] = await Promise.all([
        idempotency.findMany(query.keys, tx),
        inquiries.findRecentByFingerprints(query.fingerprints, query.since, tx),
        inquiries.takenReferences(query.references, tx),
      ]);
      return { keys, recent, taken };
    },
    async write({ inquiries: items, channels, keys, now }, tx) {
      // A spam inquiry is stored but not delivered (docs/spam.md).
      const references = inboxReferences(items);
      if (!postgres) {
        const [inserted] = await Promise.all([
          inquiries.insertMany(items, tx),
          outbox.enqueue(references, channels, now, tx),
          idempotency.insertMany(keys, tx),
        ]);
        return inserted;
      }
      if (items.length === 0 && keys.length === 0) return new Set();
      const inserted = await onPostgres.writeIntake(q(tx), {
        inquiries: items.map(inquiryRow),
        deliveries: inquiryDeliveries(references, channels, now),
        keys: keys.map(idempotencyKeyRow),
      });
      return new Set(inserted);
    },
  };
}

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
  { keys = [], fingerprints = [], since = new Date(0), references = [], senders }: Partial<IntakeQuery>,
  tx?: Tx,
): Promise<IntakeFacts> {
  const facts: IntakeFacts = { keys: new Map(), recent: new Map(), taken: new Set(), senders: new Map() };
  const rows = await onPostgres.lookupIntake(q(tx), {
    keys,
    fingerprints,
    since: since.getTime(),
    references,
    bodyHashes: senders?.bodyHashes ?? [],
    sendersSince: senders?.since.getTime() ?? 0,
    sendersLimit: senders?.limit ?? 0,
  });
  for (const row of rows) {
    if (row.kind === 'key') facts.keys.set(row.key, toIdempotencyEntry(row));
    else if (row.kind === 'recent') facts.recent.set(row.key, row.reference);
    else if (row.kind === 'taken') facts.taken.add(row.reference);
    else facts.senders.set(row.key, (facts.senders.get(row.key) ?? new Set()).add(row.reference));
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
      const { senders: bySender } = query;
      const [keys, recent, taken, senders] = await Promise.all([
        idempotency.findMany(query.keys, tx),
        inquiries.findRecentByFingerprints(query.fingerprints, query.since, tx),
        inquiries.takenReferences(query.references, tx),
        bySender ? inquiries.findSendersByBodyHashes(bySender.bodyHashes, bySender.since, bySender.limit, tx) : new Map(),
      ]);
      return { keys, recent, taken, senders };
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

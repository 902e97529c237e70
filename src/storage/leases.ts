// Delivery leases: which worker holds a delivery, renewed while its send runs, given back unused.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Dialect } from './ports.js';
import type { Database } from './schema.js';

/**
 * Deliveries still leased to `owner` (and, if given, still at `attempts`). The id list comes first
 * so that SQLite looks the rows up by primary key instead of scanning every pending delivery.
 */
export function heldBy(deliveryIds: readonly string[], owner: string, attempts?: number) {
  return (eb: ExpressionBuilder<Database, 'deliveries'>) =>
    eb.and([
      eb('id', 'in', deliveryIds),
      eb('locked_by', '=', owner),
      eb('locked_until', 'is not', null),
      ...(attempts === undefined ? [] : [eb('attempts', '=', attempts)]),
    ]);
}

/** Outbox.renewLeases: extends the leases `owner` still holds; returns the ids renewed. */
export async function renewLeases(
  db: Kysely<Database>,
  dialect: Dialect,
  { deliveryIds, owner, until }: { deliveryIds: readonly string[]; owner: string; until: Date },
): Promise<string[]> {
  if (deliveryIds.length === 0) return [];
  // heldBy is the fence. On PostgreSQL a row locked right now is skipped, not waited for: it is being
  // recorded or claimed by another worker, and waiting could deadlock with an attempt record.
  const held = db.selectFrom('deliveries').select('id').where(heldBy(deliveryIds, owner));
  const renewed = await db
    .updateTable('deliveries')
    .set({ locked_until: until.getTime() })
    .where('id', 'in', dialect === 'postgres' ? held.forUpdate().skipLocked() : held)
    .returning('id')
    .execute();
  return renewed.map((row) => row.id);
}

/** Outbox.releaseClaims: gives deliveries `owner` still holds back, still due. */
export async function releaseClaims(db: Kysely<Database>, deliveryIds: readonly string[], owner: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.updateTable('deliveries').set({ locked_until: null, locked_by: null }).where(heldBy(deliveryIds, owner)).execute();
}

/** Outbox.releaseLeases: drops every lease. */
export async function releaseLeases(db: Kysely<Database>): Promise<void> {
  // Only the leased rows: rewriting every pending row would hold the write lock in proportion to the backlog.
  await db
    .updateTable('deliveries')
    .set({ locked_until: null, locked_by: null })
    .where('status', '=', 'pending')
    .where('locked_until', 'is not', null)
    .execute();
}

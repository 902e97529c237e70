// The delivery outbox: deliveries queued with the data that causes them, claimed with a lease,
// attempted, recorded, retried or finished, and re-queued (docs/delivery.md).
import { type Kysely, sql } from 'kysely';
import { readChannelHealth } from './channel-health.js';
import { claimDue } from './claim-due.js';
import type { Executor } from './executor.js';
import { releaseClaims, releaseLeases, renewLeases } from './leases.js';
import type { DeliveryStatus, Dialect, Outbox, Tx } from './ports.js';
import { insertDeliveries } from './postgres-batch.js';
import { recordAttempts } from './record-attempts.js';
import { requeue } from './requeue.js';
import { inquiryDeliveries, pendingDelivery, toDelivery } from './rows.js';
import type { Database } from './schema.js';

export function createOutbox(db: Kysely<Database>, dialect: Dialect, q: Executor): Outbox {
  const outbox: Outbox = {
    async enqueue(references, channels, now, tx) {
      const rows = inquiryDeliveries(references, channels, now);
      if (rows.length === 0) return;
      if (dialect === 'postgres') await insertDeliveries(q(tx), rows);
      else await q(tx).insertInto('deliveries').values(rows).execute();
    },
    claimDue: (now, limit, leaseMs, owner) => claimDue(db, dialect, { now, limit, leaseMs, owner }),
    async enqueueMessage(message, channel, now, tx) {
      const write = async (trx: Kysely<Database>) => {
        await trx
          .insertInto('messages')
          .values({ id: message.id, to_address: message.to, subject: message.subject, body: message.body, created_at: now.getTime() })
          .execute();
        await trx
          .insertInto('deliveries')
          .values(pendingDelivery({ reference: null, message_id: message.id, channel }, now))
          .execute();
      };
      await (tx ? write(q(tx)) : db.transaction().execute(write));
    },
    async recordAttempt(record, tx) {
      // Writes that belong together: in the caller's transaction, or in one of their own.
      const recordOne = (trx: Tx) => outbox.recordAttempts([record], trx);
      const [written] = await (tx ? recordOne(tx) : db.transaction().execute((trx) => recordOne(trx as unknown as Tx)));
      return written === true;
    },
    recordAttempts: (records, tx) => recordAttempts(q(tx), records),
    renewLeases: (deliveryIds, owner, until) => renewLeases(db, dialect, { deliveryIds, owner, until }),
    releaseClaims: (deliveryIds, owner) => releaseClaims(db, deliveryIds, owner),
    releaseLeases: () => releaseLeases(db),
    requeue: (now, reference) => requeue(db, dialect, now, reference),
    async forReference(reference) {
      return outbox.forReferences([reference]);
    },
    async forReferences(references) {
      if (references.length === 0) return [];
      const rows = await db.selectFrom('deliveries').selectAll().where('reference', 'in', references).orderBy('channel').execute();
      return rows.map(toDelivery);
    },
    async attempts(deliveryId) {
      const rows = await db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
      return rows.map((row) => ({
        attempt: Number(row.attempt),
        attemptedAt: new Date(Number(row.attempted_at)),
        outcome: row.outcome,
        error: row.error,
        durationMs: Number(row.duration_ms),
      }));
    },
    async countByChannelAndStatus() {
      // Successes from their counts; the rest through the status index, a cost that follows the
      // backlog, not every delivery ever made. One statement, one snapshot: a batch recorded
      // meanwhile is counted once.
      const rows = await db
        .selectFrom('deliveries')
        .select(['channel', 'status', (eb) => eb.fn.countAll<number>().as('count')])
        .where('status', 'in', ['pending', 'failed', 'dead'])
        .groupBy(['channel', 'status'])
        .unionAll(
          db
            .selectFrom('delivery_successes')
            .select(['channel', sql<DeliveryStatus>`'succeeded'`.as('status'), 'count'])
            // A channel that only ever failed has a row for its health, and no success to count.
            .where('count', '>', 0),
        )
        .execute();
      return rows.map((row) => ({ channel: row.channel, status: row.status, count: Number(row.count) }));
    },
    health: () => readChannelHealth(db),
    async countByStatus() {
      const counts: Record<DeliveryStatus, number> = { pending: 0, succeeded: 0, failed: 0, dead: 0 };
      for (const { status, count } of await outbox.countByChannelAndStatus()) counts[status] += count;
      return counts;
    },
  };

  return outbox;
}

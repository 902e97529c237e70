// The claim: the oldest due deliveries leased to one worker (FOR UPDATE SKIP LOCKED on PostgreSQL),
// read together with what they carry.
import type { Kysely } from 'kysely';
import type { Dialect, DueDelivery } from './ports.js';
import { INQUIRY_COLUMNS, toDelivery, toInquiry } from './rows.js';
import type { Database } from './schema.js';
import { inTransaction } from './transaction.js';

/**
 * The ids of the oldest due, unleased deliveries: service messages only, or inquiries only; of one
 * channel, or of all. Each kind has its index (status, channel, run_at); the service messages' is
 * partial (migration 011), so a claim of them never walks an inquiry backlog.
 */
export function dueDeliveries(
  db: Kysely<Database>,
  { at, count, messagesOnly, channel }: { at: number; count: number; messagesOnly: boolean; channel: string | undefined },
) {
  return db
    .selectFrom('deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('run_at', '<=', at)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
    .where('message_id', messagesOnly ? 'is not' : 'is', null)
    .$if(channel !== undefined, (query) => query.where('channel', '=', channel as string))
    .orderBy('run_at')
    .limit(count);
}

/** Outbox.claimDue: leases due deliveries to `owner` until `now + leaseMs`, up to `limit` in all or per channel. */
export async function claimDue(
  db: Kysely<Database>,
  dialect: Dialect,
  { now, limit, leaseMs, owner }: { now: Date; limit: number | ReadonlyMap<string, number>; leaseMs: number; owner: string },
): Promise<DueDelivery[]> {
  const at = now.getTime();
  // What the claimed deliveries carry is read in the claim's transaction: if that read fails, the
  // claim is rolled back instead of holding them for a lease. A claim need not be durable: one lost
  // with the machine's power is claimed again.
  const { claimed, inquiryRows, messageRows } = await inTransaction(
    db,
    dialect,
    async (trx) => {
      const claim = (count: number, messagesOnly: boolean, channel: string | undefined) => {
        const due = dueDeliveries(trx, { at, count, messagesOnly, channel });
        return trx
          .updateTable('deliveries')
          .set({ locked_until: at + leaseMs, locked_by: owner })
          .where('id', 'in', dialect === 'postgres' ? due.forUpdate().skipLocked() : due)
          .returningAll()
          .execute();
      };
      // Service messages first (a person is waiting for a code that expires), then the oldest
      // due inquiry deliveries: two disjoint sets, so no row is claimed twice.
      const claimGroup = async (count: number, channel?: string) => {
        const messages = await claim(count, true, channel);
        return messages.length < count ? [...messages, ...(await claim(count - messages.length, false, channel))] : messages;
      };
      const claimed = typeof limit === 'number' ? await claimGroup(limit) : [];
      if (typeof limit !== 'number')
        for (const [channel, count] of limit) if (count > 0) claimed.push(...(await claimGroup(count, channel)));
      const references = [...new Set(claimed.flatMap((row) => (row.reference === null ? [] : [row.reference])))];
      const messageIds = claimed.flatMap((row) => (row.message_id === null ? [] : [row.message_id]));
      const inquiryRows = references.length
        ? await trx.selectFrom('inquiries').select(INQUIRY_COLUMNS).where('reference', 'in', references).execute()
        : [];
      const messageRows = messageIds.length ? await trx.selectFrom('messages').selectAll().where('id', 'in', messageIds).execute() : [];
      return { claimed, inquiryRows, messageRows };
    },
    { durable: false },
  );
  const inquiriesByReference = new Map(inquiryRows.map((row) => [row.reference, toInquiry(row)]));
  const messagesById = new Map(
    messageRows.map((row) => [row.id, { id: row.id, to: row.to_address, subject: row.subject, body: row.body }]),
  );
  return claimed.flatMap((row): DueDelivery[] => {
    const inquiry = row.reference === null ? undefined : inquiriesByReference.get(row.reference);
    if (inquiry) return [{ delivery: toDelivery(row), payload: { kind: 'inquiry', inquiry } }];
    const message = row.message_id === null ? undefined : messagesById.get(row.message_id);
    return message ? [{ delivery: toDelivery(row), payload: { kind: 'message', message } }] : [];
  });
}

// Inquiries: inserted by intake batches, looked up by reference and fingerprint, listed by the CLI.
import { type Kysely, sql } from 'kysely';
import type { Executor } from './executor.js';
import { intakeFactsOnPostgres } from './intake-store.js';
import type { Dialect, InquiryStore } from './ports.js';
import * as onPostgres from './postgres-batch.js';
import { INQUIRY_COLUMNS, inquiryDeliveries, inquiryRow, toInquiry, toJudgement } from './rows.js';
import type { Database } from './schema.js';

/** Rows an SQLite insert binds at once: some fifteen columns each, within its 32,766 values. */
const SQLITE_INSERT_ROWS = 1_000;

export function createInquiryStore(db: Kysely<Database>, q: Executor, dialect: Dialect): InquiryStore {
  /** The statements an intake batch runs have texts of their own there (postgres-batch.ts). */
  const postgres = dialect === 'postgres';
  return {
    async insertMany(items, tx) {
      if (items.length === 0) return new Set();
      const rows = items.map(inquiryRow);
      if (postgres) return new Set(await onPostgres.insertInquiries(q(tx), rows));
      const inserted = new Set<string>();
      for (let start = 0; start < rows.length; start += SQLITE_INSERT_ROWS) {
        const chunk = await q(tx)
          .insertInto('inquiries')
          .values(rows.slice(start, start + SQLITE_INSERT_ROWS))
          .onConflict((oc) => oc.column('reference').doNothing())
          .returning('reference')
          .execute();
        for (const row of chunk) inserted.add(row.reference);
      }
      return inserted;
    },
    async findByReference(reference, tx) {
      const row = await q(tx).selectFrom('inquiries').select(INQUIRY_COLUMNS).where('reference', '=', reference).executeTakeFirst();
      return row && toInquiry(row);
    },
    async judgements(references) {
      if (references.length === 0) return new Map();
      const rows = await db
        .selectFrom('inquiries')
        .select(['reference', 'verdict', 'spam_score', 'spam_reasons', 'released_at'])
        .where('reference', 'in', references)
        .execute();
      return new Map(rows.map((row) => [row.reference, toJudgement(row)]));
    },
    async takenReferences(references, tx) {
      if (references.length === 0) return new Set();
      if (postgres) return (await intakeFactsOnPostgres(q, { references }, tx)).taken;
      const rows = await q(tx).selectFrom('inquiries').select('reference').where('reference', 'in', references).execute();
      return new Set(rows.map((row) => row.reference));
    },
    async countReceivedSince(since, limit) {
      const recent = db.selectFrom('inquiries').select('reference').where('received_at', '>', since.getTime()).limit(limit);
      const row = await db
        .selectFrom(recent.as('recent'))
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async findRecentByFingerprints(fingerprints, since, tx) {
      const found = new Map<string, string>();
      if (fingerprints.length === 0) return found;
      if (postgres) return (await intakeFactsOnPostgres(q, { fingerprints, since }, tx)).recent;
      const rows = await q(tx)
        .selectFrom('inquiries')
        .select(['fingerprint', 'reference'])
        .where('fingerprint', 'in', fingerprints)
        .where('received_at', '>=', since.getTime())
        .orderBy('received_at', 'desc')
        .orderBy('reference', 'desc')
        .execute();
      for (const row of rows) found.set(row.fingerprint, row.reference); // the earliest wins, of equal times the first reference
      return found;
    },
    async findSendersByBodyHashes(bodyHashes, since, limit, tx) {
      if (bodyHashes.length === 0) return new Map();
      if (postgres) return (await intakeFactsOnPostgres(q, { senders: { bodyHashes, since, limit } }, tx)).senders;
      const distinct = q(tx)
        .selectFrom('inquiries')
        .select((eb) => ['body_hash', eb.fn<string>('lower', ['email']).as('sender')])
        .distinct()
        .where('body_hash', 'in', bodyHashes)
        .where('received_at', '>=', since.getTime());
      const rows = await q(tx)
        .selectFrom(
          q(tx)
            .selectFrom(distinct.as('distinct_senders'))
            .select((eb) => [
              'body_hash',
              'sender',
              sql<number>`row_number() over (partition by ${eb.ref('body_hash')} order by ${eb.ref('sender')})`.as('n'),
            ])
            .as('numbered'),
        )
        .select(['body_hash', 'sender'])
        .where('n', '<=', limit)
        .execute();
      const found = new Map<string, Set<string>>();
      for (const { body_hash, sender } of rows)
        if (body_hash !== null) found.set(body_hash, (found.get(body_hash) ?? new Set()).add(sender));
      return found;
    },
    async list({ limit, since, after, verdict }) {
      let query = db.selectFrom('inquiries').select(INQUIRY_COLUMNS);
      if (verdict) query = query.where('verdict', '=', verdict);
      if (since) query = query.where('received_at', '>=', since.getTime());
      if (after) {
        const at = after.receivedAt.getTime();
        // The bound on received_at alone first, so that an index on it reads only the rows left.
        query = query
          .where('received_at', '<=', at)
          .where((eb) => eb.or([eb('received_at', '<', at), eb('reference', '>', after.reference)]));
      }
      const rows = await query.orderBy('received_at', 'desc').orderBy('reference').limit(limit).execute();
      return rows.map(toInquiry);
    },
    async setVerdict(reference, verdict, channels, now) {
      return db.transaction().execute(async (trx) => {
        // Into the quarantine: for the next digest (migration 016); out of it: its time there ends.
        const moved = await trx
          .updateTable('inquiries')
          .set(
            verdict === 'spam'
              ? { verdict, quarantined_at: now.getTime(), digest_id: null, released_at: null }
              : { verdict, quarantined_at: null, released_at: now.getTime() },
          )
          .where('reference', '=', reference)
          .where('verdict', '<>', verdict)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        if (verdict === 'spam') return true;
        // A channel that has a delivery of it already (sent before it was moved to spam) is not sent twice.
        const had = await trx.selectFrom('deliveries').select('channel').where('reference', '=', reference).execute();
        const missing = channels.filter((channel) => !had.some((row) => row.channel === channel));
        const deliveries = inquiryDeliveries([reference], missing, now);
        if (deliveries.length > 0) await trx.insertInto('deliveries').values(deliveries).execute();
        return true;
      });
    },
  };
}

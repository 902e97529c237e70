// The quarantine digest's one write: a digest recorded, once per period, and the quarantined
// inquiries no digest has taken yet taken into it (docs/spam.md).
import { sql } from 'kysely';
import type { Executor } from './executor.js';
import type { DigestStore, InquiryVerdict } from './ports.js';
import { INQUIRY_COLUMNS, toInquiry, toJudgement } from './rows.js';

/** The spam verdict as a literal: the partial index of what no digest took (migration 016) matches it, not a parameter. */
const SPAM = sql.lit<InquiryVerdict>('spam');

export function createDigestStore(q: Executor): DigestStore {
  return {
    async take({ id, period, at, limit }, tx) {
      const trx = q(tx);
      // Written first: on SQLite the transaction takes the write lock at once, and on PostgreSQL a
      // second instance taking the same period waits here for the first to commit, then finds it.
      const recorded = await trx
        .insertInto('quarantine_digests')
        .values({ id, period, taken_at: at.getTime(), total: 0 })
        .onConflict((oc) => oc.column('period').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (recorded === undefined) return null;
      const previous = await trx
        .selectFrom('quarantine_digests')
        .select((eb) => eb.fn.max('taken_at').as('at'))
        .where('id', '<>', id)
        .executeTakeFirst();
      const taken = await trx
        .updateTable('inquiries')
        .set({ digest_id: id })
        .where('verdict', '=', SPAM)
        .where('digest_id', 'is', null)
        .executeTakeFirst();
      const total = Number(taken.numUpdatedRows);
      const rows =
        total === 0
          ? []
          : await trx
              .selectFrom('inquiries')
              .select(INQUIRY_COLUMNS)
              .where('digest_id', '=', id)
              .orderBy('spam_score')
              .orderBy(sql`coalesce(quarantined_at, received_at)`)
              .orderBy('reference')
              .limit(limit)
              .execute();
      if (total > 0) await trx.updateTable('quarantine_digests').set({ total }).where('id', '=', id).execute();
      const since = previous?.at ?? null;
      return {
        since: since === null ? null : new Date(Number(since)),
        total,
        listed: rows.map((row) => ({
          inquiry: toInquiry(row),
          judgement: toJudgement(row),
          quarantinedAt: new Date(Number(row.quarantined_at ?? row.received_at)),
        })),
      };
    },
  };
}

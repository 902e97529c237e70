// Retention's deletions (RetentionStore): each call one short transaction through at most `limit`
// rows. On PostgreSQL the rows chosen are locked and those another instance holds are skipped, so
// instances running the hourly maintenance at once split the work rather than wait on each other.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DeliveryStatus, Dialect, RetentionBatch, RetentionStore } from './ports.js';
import { deleteSpentSignIns } from './retention-oauth.js';
import type { Database } from './schema.js';
import { inTransaction } from './transaction.js';

const count = (result: { numDeletedRows: bigint }): number => Number(result.numDeletedRows);
/**
 * The statuses of a delivery that has ended; any other keeps its inquiry. (Also what makes SQLite
 * look a delivery up by its inquiry's index rather than walk every pending one.)
 */
const ENDED: readonly DeliveryStatus[] = ['succeeded', 'failed', 'dead'];

export function createRetentionStore(db: Kysely<Database>, dialect: Dialect): RetentionStore {
  const postgres = dialect === 'postgres';
  /** The rows chosen, locked on PostgreSQL (SKIP LOCKED: those another instance is deleting are left to it). */
  const locked = <O>(query: SelectQueryBuilder<Database, keyof Database, O>) => (postgres ? query.forUpdate().skipLocked() : query);
  const transaction = <T>(work: (trx: Kysely<Database>) => Promise<T>) => inTransaction(db, dialect, work);

  /** Deletes these deliveries (finished ones: no worker holds them) with their attempts. */
  async function deleteDeliveries(trx: Kysely<Database>, ids: readonly string[]) {
    if (ids.length === 0) return { deliveries: 0, attempts: 0 };
    const attempts = count(await trx.deleteFrom('delivery_attempts').where('delivery_id', 'in', ids).executeTakeFirstOrThrow());
    const deliveries = count(await trx.deleteFrom('deliveries').where('id', 'in', ids).executeTakeFirstOrThrow());
    return { deliveries, attempts };
  }

  return {
    deleteInquiries: (verdict, before, limit) =>
      transaction(async (trx): Promise<RetentionBatch> => {
        const chosen = await locked(
          trx
            .selectFrom('inquiries')
            .select('reference')
            .where('verdict', '=', verdict)
            .where('received_at', '<', before.getTime())
            // One moved to the quarantine later (`spam REF`) is kept from the move on.
            .where((eb) => eb.or([eb('quarantined_at', 'is', null), eb('quarantined_at', '<', before.getTime())]))
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('deliveries')
                    .select(sql.lit(1).as('one'))
                    .whereRef('deliveries.reference', '=', 'inquiries.reference')
                    .where('deliveries.status', 'not in', ENDED),
                ),
              ),
            )
            .orderBy('received_at')
            .limit(limit),
        ).execute();
        const references = chosen.map((row) => row.reference);
        if (references.length === 0) return { seen: 0, deleted: {} };
        // Locked on PostgreSQL: a re-queue waits until this commits, and then finds nothing to re-queue.
        const ended = await locked(
          trx.selectFrom('deliveries').select('id').where('reference', 'in', references).where('status', 'in', ENDED),
        ).execute();
        const endedIds = new Set(ended.map((row) => row.id));
        const deliveries = await trx.selectFrom('deliveries').select(['id', 'reference']).where('reference', 'in', references).execute();
        // One re-queued since it was chosen (or locked by that re-queue) keeps its inquiry and every delivery of it.
        const held = new Set(deliveries.filter((row) => !endedIds.has(row.id)).map((row) => row.reference));
        const gone = references.filter((reference) => !held.has(reference));
        if (gone.length === 0) return { seen: references.length, deleted: {} };
        const removed = await deleteDeliveries(
          trx,
          deliveries.filter((row) => !held.has(row.reference)).map((row) => row.id),
        );
        const keys = count(await trx.deleteFrom('idempotency_keys').where('reference', 'in', gone).executeTakeFirstOrThrow());
        const inquiries = count(await trx.deleteFrom('inquiries').where('reference', 'in', gone).executeTakeFirstOrThrow());
        return { seen: references.length, deleted: { inquiries, ...removed, idempotencyKeys: keys } };
      }),

    deleteFinishedMessages: (before, limit) =>
      transaction(async (trx): Promise<RetentionBatch> => {
        const chosen = await locked(
          trx
            .selectFrom('messages')
            .select('id')
            .where('created_at', '<', before.getTime())
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('deliveries')
                    .select(sql.lit(1).as('one'))
                    .whereRef('deliveries.message_id', '=', 'messages.id')
                    // Pending (unfinished) or finished too recently.
                    .where((eb) => eb.or([eb('finished_at', 'is', null), eb('finished_at', '>=', before.getTime())])),
                ),
              ),
            )
            .limit(limit),
        ).execute();
        const ids = chosen.map((row) => row.id);
        if (ids.length === 0) return { seen: 0, deleted: {} };
        const deliveries = await trx.selectFrom('deliveries').select('id').where('message_id', 'in', ids).execute();
        const removed = await deleteDeliveries(
          trx,
          deliveries.map((row) => row.id),
        );
        const messages = count(await trx.deleteFrom('messages').where('id', 'in', ids).executeTakeFirstOrThrow());
        return { seen: ids.length, deleted: { messages, ...removed } };
      }),

    deleteSpentClients: ({ revokedBefore, pendingClaimExpiredBefore, unclaimedAnonymousBefore }, limit) =>
      transaction(async (trx): Promise<RetentionBatch> => {
        const chosen = await locked(
          trx
            .selectFrom('agent_clients')
            .select('client_id')
            .where(({ and, or, not, exists, selectFrom, eb }) => {
              const liveClaim = exists(
                selectFrom('agent_claims')
                  .select(sql.lit(1).as('one'))
                  .whereRef('agent_claims.client_id', '=', 'agent_clients.client_id')
                  .where('agent_claims.expires_at', '>=', pendingClaimExpiredBefore.getTime()),
              );
              return or([
                and([eb('status', '=', 'revoked'), eb('revoked_at', '<', revokedBefore.getTime())]),
                and([eb('status', '=', 'pending'), not(liveClaim)]),
                and([
                  eb('status', '=', 'active'),
                  eb('registration_type', '=', 'anonymous'),
                  eb('email', 'is', null),
                  eb('created_at', '<', unclaimedAnonymousBefore.getTime()),
                  not(liveClaim),
                ]),
              ]);
            })
            .limit(limit),
        ).execute();
        const ids = chosen.map((row) => row.client_id);
        if (ids.length === 0) return { seen: 0, deleted: {} };
        const claims = count(await trx.deleteFrom('agent_claims').where('client_id', 'in', ids).executeTakeFirstOrThrow());
        const clients = count(await trx.deleteFrom('agent_clients').where('client_id', 'in', ids).executeTakeFirstOrThrow());
        return { seen: ids.length, deleted: { clients, claims } };
      }),

    deleteExpiredClaims: (before, limit) =>
      transaction(async (trx): Promise<RetentionBatch> => {
        const chosen = await locked(
          trx.selectFrom('agent_claims').select('token_hash').where('expires_at', '<', before.getTime()).limit(limit),
        ).execute();
        const hashes = chosen.map((row) => row.token_hash);
        if (hashes.length === 0) return { seen: 0, deleted: {} };
        const claims = count(await trx.deleteFrom('agent_claims').where('token_hash', 'in', hashes).executeTakeFirstOrThrow());
        return { seen: hashes.length, deleted: { claims } };
      }),

    deleteExpiredTokenRecords: (now, limit) =>
      transaction(async (trx): Promise<RetentionBatch> => {
        // By the row's own address (claim_code_sends has no key): the first `limit` expired rows of each table.
        const rowId = sql.raw(postgres ? 'ctid' : 'rowid');
        const expired = async (table: 'revoked_tokens' | 'used_assertions' | 'claim_code_sends') => {
          const result = await sql`
            delete from ${sql.table(table)} where ${rowId} in (
              select ${rowId} from ${sql.table(table)} where expires_at < ${now.getTime()} limit ${limit})
          `.execute(trx);
          return Number(result.numAffectedRows ?? 0);
        };
        const deleted = {
          revokedTokens: await expired('revoked_tokens'),
          usedAssertions: await expired('used_assertions'),
          codeSends: await expired('claim_code_sends'),
        };
        return { seen: Math.max(...Object.values(deleted)), deleted };
      }),

    deleteSpentSignIns: (cutoffs, limit) => transaction((trx) => deleteSpentSignIns(trx, cutoffs, limit)),
  };
}

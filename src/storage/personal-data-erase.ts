// PersonalDataStore.erase: every row held about one person deleted in one transaction, whole or not
// at all; nothing at all while a delivery of theirs is being sent.
import type { Kysely } from 'kysely';
import type { DataSubject, ErasedData, Erasure } from './personal-data-ports.js';
import { claimsOf, clientsOf, lowered, mailsMentioning, mailsTo, mentions, refreshTokensOf, signInsOf } from './personal-data-queries.js';
import type { DeliveryRecord, Dialect } from './ports.js';
import { toDelivery } from './rows.js';
import type { Database } from './schema.js';
import { inTransaction } from './transaction.js';

/** IN-lists go this many values at a time: far below either database's limit on parameters. */
const CHUNK_SIZE = 500;

/** Thrown inside the transaction to roll it back: these deliveries are leased, their send under way. */
class DeliveriesInFlight extends Error {
  constructor(readonly deliveries: DeliveryRecord[]) {
    super('deliveries in flight');
  }
}

export async function erasePerson(db: Kysely<Database>, dialect: Dialect, subject: DataSubject, now: Date): Promise<Erasure> {
  try {
    return { erased: await inTransaction(db, dialect, (trx) => eraseIn(trx, dialect, subject, now.getTime())) };
  } catch (error) {
    if (error instanceof DeliveriesInFlight) return { inFlight: error.deliveries };
    throw error;
  }
}

/** Runs `remove` on `keys` a chunk at a time; returns the rows deleted in all. */
async function deleteIn(keys: readonly string[], remove: (chunk: string[]) => Promise<{ numDeletedRows: bigint }>): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < keys.length; start += CHUNK_SIZE) {
    deleted += Number((await remove(keys.slice(start, start + CHUNK_SIZE))).numDeletedRows);
  }
  return deleted;
}

async function eraseIn(trx: Kysely<Database>, dialect: Dialect, subject: DataSubject, now: number): Promise<ErasedData> {
  // The rows are chosen first, by key: on PostgreSQL an inquiry arriving meanwhile is left whole.
  const inquiries = await trx
    .selectFrom('inquiries')
    .select(['reference', 'received_at'])
    .where(lowered('email'), '=', subject.email)
    .orderBy('received_at')
    .orderBy('reference')
    .execute();
  const references = inquiries.map((row) => row.reference);
  const mailIds = [
    ...new Set([...(await mailsTo(trx, subject).execute()), ...(await mailsMentioning(trx, subject).execute())].map((row) => row.id)),
  ];
  const clientIds = (await clientsOf(trx, subject).execute()).map((row) => row.client_id);
  const claimHashes = (await claimsOf(trx, subject).execute()).map((row) => row.token_hash);
  const signInIds = (await signInsOf(trx, subject).execute()).map((row) => row.id);
  const refreshHashes = (await refreshTokensOf(trx, subject).execute()).map((row) => row.token_hash);

  // The deliveries are locked (PostgreSQL; SQLite has one writer) so that no worker claims one from
  // here on. One leased already, its lease running, is being sent: erasing it could not stop that.
  const deliveries = [];
  for (const [column, keys] of [
    ['reference', references],
    ['message_id', mailIds],
  ] as const) {
    for (let start = 0; start < keys.length; start += CHUNK_SIZE) {
      const chunk = keys.slice(start, start + CHUNK_SIZE);
      const locked = trx.selectFrom('deliveries').selectAll().where(column, 'in', chunk);
      deliveries.push(...(await (dialect === 'postgres' ? locked.forUpdate() : locked).execute()));
    }
  }
  const inFlight = deliveries.filter((row) => row.status === 'pending' && row.locked_until !== null && Number(row.locked_until) > now);
  if (inFlight.length > 0) throw new DeliveriesInFlight(inFlight.map(toDelivery));

  const deliveryIds = deliveries.map((row) => row.id);
  const attempts = await deleteIn(deliveryIds, (chunk) =>
    trx.deleteFrom('delivery_attempts').where('delivery_id', 'in', chunk).executeTakeFirst(),
  );
  await deleteIn(deliveryIds, (chunk) => trx.deleteFrom('deliveries').where('id', 'in', chunk).executeTakeFirst());
  const idempotencyKeys = await deleteIn(references, (chunk) =>
    trx.deleteFrom('idempotency_keys').where('reference', 'in', chunk).executeTakeFirst(),
  );
  await deleteIn(references, (chunk) => trx.deleteFrom('inquiries').where('reference', 'in', chunk).executeTakeFirst());
  const serviceMails = await deleteIn(mailIds, (chunk) => trx.deleteFrom('messages').where('id', 'in', chunk).executeTakeFirst());
  const codeSends =
    Number((await trx.deleteFrom('claim_code_sends').where('recipient', '=', subject.recipient).executeTakeFirst()).numDeletedRows) +
    (await deleteIn(claimHashes, (chunk) => trx.deleteFrom('claim_code_sends').where('token_hash', 'in', chunk).executeTakeFirst()));
  const agentClaims = await deleteIn(claimHashes, (chunk) =>
    trx.deleteFrom('agent_claims').where('token_hash', 'in', chunk).executeTakeFirst(),
  );
  const signIns = await deleteIn(signInIds, (chunk) => trx.deleteFrom('oauth_authorizations').where('id', 'in', chunk).executeTakeFirst());
  const refreshTokens = await deleteIn(refreshHashes, (chunk) =>
    trx.deleteFrom('oauth_refresh_tokens').where('token_hash', 'in', chunk).executeTakeFirst(),
  );
  // A channel's last error (its health, src/delivery/health.ts) may quote the address a mail was refused for.
  await trx.updateTable('delivery_successes').set({ last_error: null }).where(mentions('last_error', subject)).execute();
  // Without its row, a registration's tokens and identity assertions are refused (src/auth/service.ts).
  await deleteIn(clientIds, (chunk) => trx.deleteFrom('agent_clients').where('client_id', 'in', chunk).executeTakeFirst());
  return {
    inquiries: inquiries.map((row) => ({ reference: row.reference, receivedAt: new Date(Number(row.received_at)) })),
    deliveries: deliveryIds.length,
    attempts,
    idempotencyKeys,
    agentRegistrations: clientIds,
    agentClaims,
    serviceMails,
    codesMailed: codeSends,
    signIns,
    refreshTokens,
  };
}

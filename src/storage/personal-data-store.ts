// PersonalDataStore (personal-data-ports.ts): one person's rows found by address (lower(...) = the
// lower-cased address, by the indexes of migration 018), erased in one transaction, and the files
// scrubbed after.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { domainOf } from '../auth/recipient.js';
import { toClient } from './auth-store.js';
import type { OpenDatabase } from './handle.js';
import { erasePerson } from './personal-data-erase.js';
import type { DataSubject, HeldDelivery, PersonalData, PersonalDataStore, Scrub } from './personal-data-ports.js';
import { claimsOf, clientsOf, inquiriesOf, lowered, mailsTo, signInsOf } from './personal-data-queries.js';
import { INQUIRY_COLUMNS, toAttempt, toDelivery, toIdempotencyEntry, toInquiry, toJudgement } from './rows.js';
import type { Database } from './schema.js';
import { SQLITE_BUSY_TIMEOUT_MS } from './sqlite.js';

/**
 * The write-ahead log is emptied (checkpoint TRUNCATE) once no reader uses it. Waiting for readers
 * holds off the service's writers, so each try waits briefly, and the writers get a turn between tries.
 */
const CHECKPOINT_TRIES = 10;
const CHECKPOINT_WAIT_MS = 200;
const CHECKPOINT_PAUSE_MS = 250;

export function createPersonalDataStore({ db, dialect }: OpenDatabase): PersonalDataStore {
  return {
    async addressOf(reference) {
      const row = await db.selectFrom('inquiries').select('email').where('reference', '=', reference).executeTakeFirst();
      return row?.email;
    },
    find: (subject) => find(db, subject),
    erase: (subject, now) => erasePerson(db, dialect, subject, now),
    async scrub(): Promise<Scrub> {
      if (dialect === 'postgres') return { dialect };
      // The search index (migration 023) drops a deleted inquiry's words only when its segments are
      // merged: merged whole here, so that none of them stays in the file.
      await sql`insert into inquiries_search (inquiries_search) values ('optimize')`.execute(db);
      return { dialect, walEmptied: await emptyWriteAheadLog(db) };
    },
  };
}

/** `items` by `key`, each group in the order given. */
function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** The deliveries `ids` selects, each with its attempts and its service mail's id. */
async function withHistory(db: Kysely<Database>, ids: SelectQueryBuilder<Database, 'deliveries', { id: string }>) {
  const [rows, attempts] = await Promise.all([
    db.selectFrom('deliveries').selectAll().where('id', 'in', ids).orderBy('queued_at').orderBy('channel').execute(),
    db.selectFrom('delivery_attempts').selectAll().where('delivery_id', 'in', ids).orderBy('attempt').execute(),
  ]);
  const history = groupBy(attempts, (attempt) => attempt.delivery_id);
  return rows.map((row) => {
    const delivery: HeldDelivery = { ...toDelivery(row), history: (history.get(row.id) ?? []).map(toAttempt) };
    return { delivery, messageId: row.message_id };
  });
}

/** PersonalDataStore.find: statement by statement, never holding the write lock. */
async function find(db: Kysely<Database>, subject: DataSubject): Promise<PersonalData> {
  const deliveries = db.selectFrom('deliveries').select('id');
  // Apart, not as a union: each is then looked up by its own index (for mails, 018's partial one).
  const [inquiries, inquiryDeliveries, mailDeliveries, keys, mails, clients, claims, codeSends, signIns, refreshTokens] = await Promise.all(
    [
      db
        .selectFrom('inquiries')
        .select(INQUIRY_COLUMNS)
        .where(lowered('email'), '=', subject.email)
        .orderBy('received_at')
        .orderBy('reference')
        .execute(),
      withHistory(db, deliveries.where('reference', 'in', inquiriesOf(db, subject))),
      withHistory(db, deliveries.where('message_id', 'is not', null).where('message_id', 'in', mailsTo(db, subject))),
      db.selectFrom('idempotency_keys').selectAll().where('reference', 'in', inquiriesOf(db, subject)).orderBy('created_at').execute(),
      db.selectFrom('messages').selectAll().where(lowered('to_address'), '=', subject.email).orderBy('created_at').execute(),
      db.selectFrom('agent_clients').selectAll().where(lowered('email'), '=', subject.email).orderBy('created_at').execute(),
      db.selectFrom('agent_claims').selectAll().where('token_hash', 'in', claimsOf(db, subject)).orderBy('created_at').execute(),
      db
        .selectFrom('claim_code_sends')
        .selectAll()
        .where((eb) => eb.or([eb('recipient', '=', subject.recipient), eb('token_hash', 'in', claimsOf(db, subject))]))
        .orderBy('sent_at')
        .execute(),
      db.selectFrom('oauth_authorizations').selectAll().where('id', 'in', signInsOf(db, subject)).orderBy('created_at').execute(),
      db.selectFrom('oauth_refresh_tokens').selectAll().where('grant_id', 'in', clientsOf(db, subject)).orderBy('created_at').execute(),
    ],
  );
  const byReference = groupBy(inquiryDeliveries, ({ delivery }) => delivery.reference);
  const byMail = groupBy(mailDeliveries, ({ messageId }) => messageId);
  const keysByReference = groupBy(keys.map(toIdempotencyEntry), (key) => key.reference);
  const only = (held: { delivery: HeldDelivery }[] | undefined) => (held ?? []).map(({ delivery }) => delivery);
  return {
    inquiries: inquiries.map((row) => {
      const { verdict, score, reasons } = toJudgement(row);
      return {
        ...toInquiry(row),
        verdict,
        spamScore: score,
        reasons,
        deliveries: only(byReference.get(row.reference)),
        idempotencyKeys: (keysByReference.get(row.reference) ?? []).map(({ key, createdAt, outcome }) => ({ key, createdAt, outcome })),
      };
    }),
    agentRegistrations: clients.map(toClient),
    agentClaims: claims.map((row) => ({
      clientId: row.client_id,
      status: row.status,
      email: row.email,
      failedAttempts: Number(row.failed_attempts),
      expiresAt: new Date(Number(row.expires_at)),
      createdAt: new Date(Number(row.created_at)),
    })),
    serviceMails: mails.map((row) => ({
      id: row.id,
      to: row.to_address,
      subject: row.subject,
      body: row.body,
      createdAt: new Date(Number(row.created_at)),
      deliveries: only(byMail.get(row.id)),
    })),
    codesMailed: codeSends.map((row) => ({
      recipient: row.recipient,
      domain: row.domain ?? domainOf(row.recipient),
      sentAt: new Date(Number(row.sent_at)),
      expiresAt: new Date(Number(row.expires_at)),
    })),
    signIns: signIns.map((row) => ({
      clientId: row.client_id,
      redirectUri: row.redirect_uri,
      resource: row.resource,
      scope: row.scope,
      status: row.status,
      email: row.email,
      grantId: row.grant_id,
      expiresAt: new Date(Number(row.expires_at)),
      createdAt: new Date(Number(row.created_at)),
    })),
    refreshTokens: refreshTokens.map((row) => ({
      grantId: row.grant_id,
      clientId: row.client_id,
      resource: row.resource,
      scope: row.scope,
      status: row.status,
      expiresAt: new Date(Number(row.expires_at)),
      createdAt: new Date(Number(row.created_at)),
    })),
  };
}

/**
 * Copies the write-ahead log into the database file and truncates it to nothing, so that earlier
 * versions of the erased pages it holds are gone. False when readers kept it in use throughout.
 */
async function emptyWriteAheadLog(db: Kysely<Database>): Promise<boolean> {
  return db.connection().execute(async (connection) => {
    for (let attempt = 1; ; attempt++) {
      await sql.raw(`pragma busy_timeout = ${CHECKPOINT_WAIT_MS}`).execute(connection);
      try {
        const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(connection);
        if (Number(rows[0]?.busy) === 0) return true;
      } finally {
        await sql.raw(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`).execute(connection);
      }
      if (attempt === CHECKPOINT_TRIES) return false;
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_PAUSE_MS));
    }
  });
}

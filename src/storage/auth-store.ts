// Agent auth's storage (AuthStore): signing keys, registered agent clients, claims and the codes they
// mail, revoked token ids and redeemed foreign assertions, held by rows and constraints.
import { type Kysely, sql } from 'kysely';
import { executorOn } from './executor.js';
import type { AgentClient, AuthStore, Claim } from './ports.js';
import type { AgentClaimsTable, AgentClientsTable, Database } from './schema.js';

const toClaim = (row: Omit<AgentClaimsTable, 'failed_attempts'> & { failed_attempts: number }): Claim => ({
  tokenHash: row.token_hash,
  clientId: row.client_id,
  status: row.status,
  email: row.email,
  otpHash: row.otp_hash,
  otpExpiresAt: row.otp_expires_at === null ? null : new Date(Number(row.otp_expires_at)),
  failedAttempts: Number(row.failed_attempts),
  expiresAt: new Date(Number(row.expires_at)),
  createdAt: new Date(Number(row.created_at)),
});

export const toClient = (row: AgentClientsTable): AgentClient => ({
  clientId: row.client_id,
  clientName: row.client_name,
  clientUri: row.client_uri,
  registrationType: row.registration_type,
  status: row.status,
  email: row.email,
  subject: row.subject,
  issuer: row.issuer,
  createdAt: new Date(Number(row.created_at)),
});

export function createAuthStore(db: Kysely<Database>): AuthStore {
  const q = executorOn(db);
  return {
    async signingKeys(tx) {
      const rows = await q(tx)
        .selectFrom('signing_keys')
        .selectAll()
        .where('retired_at', 'is', null)
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map((row) => ({
        kid: row.kid,
        privateJwk: row.private_jwk,
        publicJwk: row.public_jwk,
        createdAt: new Date(Number(row.created_at)),
      }));
    },
    async resealSigningKey(kid, privateJwk, tx) {
      await q(tx).updateTable('signing_keys').set({ private_jwk: privateJwk }).where('kid', '=', kid).execute();
    },
    async addSigningKey(key, tx) {
      await q(tx)
        .insertInto('signing_keys')
        .values({
          kid: key.kid,
          private_jwk: key.privateJwk,
          public_jwk: key.publicJwk,
          created_at: key.createdAt.getTime(),
          retired_at: null,
        })
        .onConflict((oc) => oc.column('kid').doNothing())
        .execute();
    },
    async createClient(client, tx) {
      const inserted = await q(tx)
        .insertInto('agent_clients')
        .values({
          client_id: client.clientId,
          client_name: client.clientName,
          client_uri: client.clientUri,
          registration_type: client.registrationType,
          status: client.status,
          email: client.email,
          subject: client.subject,
          issuer: client.issuer,
          created_at: client.createdAt.getTime(),
          revoked_at: null,
        })
        // The conflict target is the partial index, named by its columns and predicate; the predicate
        // is a literal, not a parameter: PostgreSQL matches it to the index's before any value is bound.
        .onConflict((oc) => oc.columns(['issuer', 'subject']).where(sql<boolean>`status = 'active'`).doNothing())
        .returning('client_id')
        .execute();
      return inserted.length === 1;
    },
    async activateClient(clientId, email, tx) {
      const activated = await q(tx)
        .updateTable('agent_clients')
        .set({ status: 'active', email })
        .where('client_id', '=', clientId)
        .where('status', '!=', 'revoked')
        .returning('client_id')
        .execute();
      return activated.length === 1;
    },
    async createClaim(claim, tx) {
      await q(tx)
        .insertInto('agent_claims')
        .values({
          token_hash: claim.tokenHash,
          client_id: claim.clientId,
          status: claim.status,
          email: claim.email,
          otp_hash: claim.otpHash,
          otp_expires_at: claim.otpExpiresAt?.getTime() ?? null,
          failed_attempts: claim.failedAttempts,
          expires_at: claim.expiresAt.getTime(),
          created_at: claim.createdAt.getTime(),
        })
        .execute();
    },
    async findClaim(tokenHash, tx) {
      const row = await q(tx).selectFrom('agent_claims').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return row && toClaim(row);
    },
    async countCodeAttempt(tokenHash, maxAttempts, tx) {
      const row = await q(tx)
        .updateTable('agent_claims')
        .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
        .where('token_hash', '=', tokenHash)
        .where('status', '=', 'initiated')
        .where('failed_attempts', '<', maxAttempts)
        .returning('failed_attempts')
        .executeTakeFirst();
      return row === undefined ? null : Number(row.failed_attempts);
    },
    async updateClaim(tokenHash, changes, expected, tx) {
      let update = q(tx)
        .updateTable('agent_claims')
        .set({
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.email !== undefined && { email: changes.email }),
          ...(changes.otpHash !== undefined && { otp_hash: changes.otpHash }),
          ...(changes.otpExpiresAt !== undefined && { otp_expires_at: changes.otpExpiresAt?.getTime() ?? null }),
          ...(changes.failedAttempts !== undefined && { failed_attempts: changes.failedAttempts }),
        })
        .where('token_hash', '=', tokenHash)
        .where('status', 'in', expected.status);
      if (expected.otpHash !== undefined) update = update.where('otp_hash', '=', expected.otpHash);
      const changed = await update.returning('token_hash').execute();
      return changed.length === 1;
    },
    async recordCodeSend(send, tx) {
      await q(tx)
        .insertInto('claim_code_sends')
        .values({
          recipient: send.recipient,
          domain: send.domain,
          token_hash: send.tokenHash,
          sent_at: send.sentAt.getTime(),
          expires_at: send.expiresAt.getTime(),
        })
        .execute();
    },
    async codesSentSince(to, since, limit, tx) {
      let query = q(tx).selectFrom('claim_code_sends').select('sent_at').where('sent_at', '>', since.getTime());
      if ('recipient' in to) query = query.where('recipient', '=', to.recipient);
      else if ('domain' in to) query = query.where('domain', '=', to.domain);
      else if ('tokenHash' in to) query = query.where('token_hash', '=', to.tokenHash);
      const rows = await query.orderBy('sent_at', 'desc').limit(limit).execute();
      return rows.map((row) => new Date(Number(row.sent_at)));
    },
    async findClient(clientId) {
      const row = await db.selectFrom('agent_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row && toClient(row);
    },
    async findClientBySubject(issuer, subject) {
      const row = await db
        .selectFrom('agent_clients')
        .selectAll()
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .where('status', '=', 'active')
        .orderBy('created_at')
        .executeTakeFirst();
      return row && toClient(row);
    },
    async revokeClient(clientId, at) {
      await db
        .updateTable('agent_clients')
        .set({ status: 'revoked', revoked_at: at.getTime() })
        .where('client_id', '=', clientId)
        .execute();
    },
    async revokeToken(jti, expiresAt, at) {
      await db
        .insertInto('revoked_tokens')
        .values({ jti, expires_at: expiresAt.getTime(), revoked_at: at.getTime() })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },
    async isTokenRevoked(jti) {
      const row = await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return row !== undefined;
    },
    async useAssertion(issuer, jti, expiresAt) {
      const rows = await db
        .insertInto('used_assertions')
        .values({ issuer, jti, expires_at: expiresAt.getTime() })
        .onConflict((oc) => oc.columns(['issuer', 'jti']).doNothing())
        .returning('jti')
        .execute();
      return rows.length === 1;
    },
  };
}

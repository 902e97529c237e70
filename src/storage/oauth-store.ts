// The MCP authorization flow's storage (OAuthStore): registered clients, sign-ins waiting for
// consent and their codes, refresh tokens. Status changes are conditional writes, so that two
// requests on any instances cannot both redeem one code or rotate one refresh token.
import type { Kysely } from 'kysely';
import { executorOn } from './executor.js';
import type { Authorization, OAuthClient, OAuthStore, RefreshToken } from './ports.js';
import type { Database } from './schema.js';
import type { OAuthAuthorizationsTable, OAuthClientsTable, OAuthRefreshTokensTable } from './schema-oauth.js';

const date = (value: number | string | bigint) => new Date(Number(value));
const optionalDate = (value: number | string | bigint | null) => (value === null ? null : date(value));

const toClient = (row: OAuthClientsTable): OAuthClient => ({
  clientId: row.client_id,
  clientName: row.client_name,
  clientUri: row.client_uri,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
  createdAt: date(row.created_at),
  lastUsedAt: optionalDate(row.last_used_at),
});

const toAuthorization = (row: Omit<OAuthAuthorizationsTable, 'failed_attempts'> & { failed_attempts: number }): Authorization => ({
  id: row.id,
  clientId: row.client_id,
  redirectUri: row.redirect_uri,
  codeChallenge: row.code_challenge,
  resource: row.resource,
  scope: row.scope,
  state: row.state,
  csrfHash: row.csrf_hash,
  status: row.status,
  email: row.email,
  otpHash: row.otp_hash,
  otpExpiresAt: optionalDate(row.otp_expires_at),
  failedAttempts: Number(row.failed_attempts),
  codeHash: row.code_hash,
  grantId: row.grant_id,
  expiresAt: date(row.expires_at),
  createdAt: date(row.created_at),
});

const toRefreshToken = (row: OAuthRefreshTokensTable): RefreshToken => ({
  tokenHash: row.token_hash,
  grantId: row.grant_id,
  clientId: row.client_id,
  resource: row.resource,
  scope: row.scope,
  status: row.status,
  expiresAt: date(row.expires_at),
  createdAt: date(row.created_at),
});

export function createOAuthStore(db: Kysely<Database>): OAuthStore {
  const q = executorOn(db);
  return {
    async createClient(client) {
      await db
        .insertInto('oauth_clients')
        .values({
          client_id: client.clientId,
          client_name: client.clientName,
          client_uri: client.clientUri,
          redirect_uris: JSON.stringify(client.redirectUris),
          created_at: client.createdAt.getTime(),
          last_used_at: client.lastUsedAt?.getTime() ?? null,
        })
        .execute();
    },
    async findClient(clientId) {
      const row = await db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row && toClient(row);
    },
    async markClientUsed(clientId, at, tx) {
      await q(tx).updateTable('oauth_clients').set({ last_used_at: at.getTime() }).where('client_id', '=', clientId).execute();
    },
    async createAuthorization(a) {
      await db
        .insertInto('oauth_authorizations')
        .values({
          id: a.id,
          client_id: a.clientId,
          redirect_uri: a.redirectUri,
          code_challenge: a.codeChallenge,
          resource: a.resource,
          scope: a.scope,
          state: a.state,
          csrf_hash: a.csrfHash,
          status: a.status,
          email: a.email,
          otp_hash: a.otpHash,
          otp_expires_at: a.otpExpiresAt?.getTime() ?? null,
          failed_attempts: a.failedAttempts,
          code_hash: a.codeHash,
          grant_id: a.grantId,
          expires_at: a.expiresAt.getTime(),
          created_at: a.createdAt.getTime(),
        })
        .execute();
    },
    async findAuthorization(id, tx) {
      const row = await q(tx).selectFrom('oauth_authorizations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toAuthorization(row);
    },
    async findAuthorizationByCode(codeHash) {
      const row = await db.selectFrom('oauth_authorizations').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
      return row && toAuthorization(row);
    },
    async updateAuthorization(id, changes, expected, tx) {
      const changed = await q(tx)
        .updateTable('oauth_authorizations')
        .set({
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.email !== undefined && { email: changes.email }),
          ...(changes.otpHash !== undefined && { otp_hash: changes.otpHash }),
          ...(changes.otpExpiresAt !== undefined && { otp_expires_at: changes.otpExpiresAt?.getTime() ?? null }),
          ...(changes.codeHash !== undefined && { code_hash: changes.codeHash }),
          ...(changes.grantId !== undefined && { grant_id: changes.grantId }),
          ...(changes.expiresAt !== undefined && { expires_at: changes.expiresAt.getTime() }),
        })
        .where('id', '=', id)
        .where('status', 'in', expected)
        .returning('id')
        .execute();
      return changed.length === 1;
    },
    async countAuthorizationAttempt(id, maxAttempts, tx) {
      const row = await q(tx)
        .updateTable('oauth_authorizations')
        .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
        .where('id', '=', id)
        .where('status', '=', 'code_sent')
        .where('failed_attempts', '<', maxAttempts)
        .returning('failed_attempts')
        .executeTakeFirst();
      return row === undefined ? null : Number(row.failed_attempts);
    },
    async createRefreshToken(token, tx) {
      await q(tx)
        .insertInto('oauth_refresh_tokens')
        .values({
          token_hash: token.tokenHash,
          grant_id: token.grantId,
          client_id: token.clientId,
          resource: token.resource,
          scope: token.scope,
          status: token.status,
          expires_at: token.expiresAt.getTime(),
          created_at: token.createdAt.getTime(),
        })
        .execute();
    },
    async findRefreshToken(tokenHash) {
      const row = await db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return row && toRefreshToken(row);
    },
    async useRefreshToken(tokenHash, tx) {
      const used = await q(tx)
        .updateTable('oauth_refresh_tokens')
        .set({ status: 'used' })
        .where('token_hash', '=', tokenHash)
        .where('status', '=', 'active')
        .returning('token_hash')
        .execute();
      return used.length === 1;
    },
    async revokeRefreshTokens(grantId, tx) {
      await q(tx).updateTable('oauth_refresh_tokens').set({ status: 'revoked' }).where('grant_id', '=', grantId).execute();
    },
  };
}

// Retention of the sign-in flow's records (RetentionStore.deleteSpentSignIns): sign-ins and refresh
// tokens past their end, registered clients never or long not used, and grants left without tokens.
import { type Kysely, sql } from 'kysely';
import type { RetentionBatch, SpentSignInCutoffs } from './ports.js';
import type { Database } from './schema.js';

const count = (result: { numDeletedRows: bigint }): number => Number(result.numDeletedRows);

export async function deleteSpentSignIns(trx: Kysely<Database>, cutoffs: SpentSignInCutoffs, limit: number): Promise<RetentionBatch> {
  const ids = async (query: { execute(): Promise<Record<string, string>[]> }, column: string) =>
    (await query.execute()).map((row) => row[column] as string);
  const authorizations = await ids(
    trx.selectFrom('oauth_authorizations').select('id').where('expires_at', '<', cutoffs.expiredBefore.getTime()).limit(limit),
    'id',
  );
  const tokens = await ids(
    trx.selectFrom('oauth_refresh_tokens').select('token_hash').where('expires_at', '<', cutoffs.expiredBefore.getTime()).limit(limit),
    'token_hash',
  );
  const clients = await ids(
    trx
      .selectFrom('oauth_clients')
      .select('client_id')
      .where((eb) =>
        eb.or([
          eb.and([eb('last_used_at', 'is', null), eb('created_at', '<', cutoffs.unusedClientBefore.getTime())]),
          eb('last_used_at', '<', cutoffs.idleClientBefore.getTime()),
        ]),
      )
      .limit(limit),
    'client_id',
  );
  // Expired tokens go first, so that a grant they leave empty goes in this same batch.
  const refreshTokens =
    tokens.length === 0
      ? 0
      : count(await trx.deleteFrom('oauth_refresh_tokens').where('token_hash', 'in', tokens).executeTakeFirstOrThrow());
  // A grant whose refresh tokens are all gone can never be used again.
  const grants = await ids(
    trx
      .selectFrom('agent_clients')
      .select('client_id')
      .where('registration_type', '=', 'oauth')
      .where('created_at', '<', cutoffs.expiredBefore.getTime())
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('oauth_refresh_tokens')
              .select(sql.lit(1).as('one'))
              .whereRef('oauth_refresh_tokens.grant_id', '=', 'agent_clients.client_id'),
          ),
        ),
      )
      .limit(limit),
    'client_id',
  );
  const deleted = {
    authorizations:
      authorizations.length === 0
        ? 0
        : count(await trx.deleteFrom('oauth_authorizations').where('id', 'in', authorizations).executeTakeFirstOrThrow()),
    refreshTokens,
    oauthClients:
      clients.length === 0 ? 0 : count(await trx.deleteFrom('oauth_clients').where('client_id', 'in', clients).executeTakeFirstOrThrow()),
    clients:
      grants.length === 0 ? 0 : count(await trx.deleteFrom('agent_clients').where('client_id', 'in', grants).executeTakeFirstOrThrow()),
  };
  return { seen: Math.max(authorizations.length, tokens.length, clients.length, grants.length), deleted };
}

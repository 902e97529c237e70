// Takes a test database back to the schema an older release left: each migration's changes undone,
// newest first, and its record removed, so that the next start runs them again as an upgrade.
import { type Kysely, sql } from 'kysely';

type Undo = (db: Kysely<unknown>) => Promise<void>;

const dropIndexes =
  (...names: string[]): Undo =>
  async (db) => {
    for (const name of names) await db.schema.dropIndex(name).execute();
  };
const dropColumns =
  (table: string, ...columns: string[]): Undo =>
  async (db) => {
    for (const column of columns) await db.schema.alterTable(table).dropColumn(column).execute();
  };
const dropTable =
  (table: string): Undo =>
  async (db) => {
    await db.schema.dropTable(table).execute();
  };

/** Newest first. A new migration adds its undo here (the helper refuses to skip one). */
const UNDO: readonly (readonly [string, Undo])[] = [
  ['029_oauth_refresh_tokens', dropTable('oauth_refresh_tokens')],
  ['028_oauth_authorizations', dropTable('oauth_authorizations')],
  ['027_oauth_clients', dropTable('oauth_clients')],
  ['026_delivery_alerts', dropTable('delivery_alerts')],
  ['025_channel_health', dropColumns('delivery_successes', 'last_success_at', 'last_failure_at', 'last_error', 'failing_since')],
  ['020_inquiry_sources', dropColumns('inquiries', 'source')],
  ['019_inquiry_releases', dropColumns('inquiries', 'released_at')],
  [
    '018_personal_data_by_address',
    dropIndexes('inquiries_email_lower', 'agent_clients_email_lower', 'agent_claims_email_lower', 'messages_to_address_lower'),
  ],
  ['017_retention_indexes', dropIndexes('inquiries_verdict_received_at', 'deliveries_message', 'agent_claims_client')],
  [
    '016_quarantine_digests',
    async (db) => {
      await dropIndexes('inquiries_undigested_spam', 'inquiries_digest')(db);
      await dropColumns('inquiries', 'quarantined_at', 'digest_id')(db);
      await dropTable('quarantine_digests')(db);
    },
  ],
  [
    '015_proof_of_work',
    async (db) => {
      await dropTable('spent_proofs')(db);
      await dropTable('service_secrets')(db);
    },
  ],
  [
    '014_inquiry_body_hashes',
    async (db) => {
      await dropIndexes('inquiries_body_hash')(db);
      await dropColumns('inquiries', 'body_hash')(db);
    },
  ],
  ['013_inquiry_verdicts', dropColumns('inquiries', 'verdict', 'spam_score', 'spam_reasons')],
  [
    '012_claim_code_sends_by_domain',
    async (db) => {
      await dropIndexes('claim_code_sends_domain', 'claim_code_sends_sent')(db);
      await dropColumns('claim_code_sends', 'domain')(db);
    },
  ],
  ['011_service_messages_due_by_channel', dropIndexes('deliveries_due_messages_by_channel')],
  ['010_deliveries_due_by_channel', dropIndexes('deliveries_due_by_channel')],
  ['009_idempotency_key_outcome', dropColumns('idempotency_keys', 'outcome')],
  ['008_delivery_success_counts', dropTable('delivery_successes')],
  ['007_claim_code_sends', dropTable('claim_code_sends')],
  ['006_one_active_client_per_subject', dropIndexes('agent_clients_active_subject')],
];

/** Undoes every applied migration named from `first` on (e.g. '008'), as a release before it left the database. */
export async function takeBackBefore<Tables>(database: Kysely<Tables>, first: string): Promise<void> {
  const db = database as unknown as Kysely<unknown>;
  const applied = await sql<{ name: string }>`select name from kysely_migration where name >= ${first} order by name desc`.execute(db);
  for (const { name } of applied.rows) {
    const undo = UNDO.find(([migration]) => migration === name)?.[1];
    if (undo === undefined) throw new Error(`no undo for migration ${name}: add it to test/helpers/older-release.ts`);
    await undo(db);
  }
  await sql`delete from kysely_migration where name >= ${first}`.execute(db);
}

// The migrations of the MCP authorization flow (docs/agent-auth.md, "Sign in with OAuth"): clients
// registered by RFC 7591, sign-ins waiting for consent and their codes, and refresh tokens by family.
import { type Kysely, type Migration, sql } from 'kysely';

export const OAUTH_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '027_oauth_clients': {
    // Dynamic client registrations; Client ID Metadata Documents are fetched and cached, never stored.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_clients')
        .addColumn('client_id', 'text', (c) => c.primaryKey())
        .addColumn('client_name', 'text', (c) => c.notNull())
        .addColumn('client_uri', 'text')
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('oauth_clients_created_at').on('oauth_clients').column('created_at').execute();
    },
  },
  '028_oauth_authorizations': {
    // One sign-in from /oauth/authorize to its code's redemption; the code and the mailed code as hashes.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_authorizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('state', 'text')
        .addColumn('csrf_hash', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('otp_hash', 'text')
        .addColumn('otp_expires_at', 'bigint')
        .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('code_hash', 'text', (c) => c.unique())
        .addColumn('grant_id', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oauth_authorizations_expires_at').on('oauth_authorizations').column('expires_at').execute();
      await db.schema.createIndex('oauth_authorizations_email_lower').on('oauth_authorizations').expression(sql`lower(email)`).execute();
    },
  },
  '029_oauth_refresh_tokens': {
    // Rotated on use; the family (the grant, an agent client) is revoked when a used one comes back.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_refresh_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('grant_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oauth_refresh_tokens_grant').on('oauth_refresh_tokens').column('grant_id').execute();
      await db.schema.createIndex('oauth_refresh_tokens_expires_at').on('oauth_refresh_tokens').column('expires_at').execute();
    },
  },
};

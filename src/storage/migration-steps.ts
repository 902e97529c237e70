// The schema's migrations, in order of their names: each one step of the schema, written with
// Kysely's schema builder and portable types so that SQLite and PostgreSQL share them. Run by migrations.ts.
import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';
import { DELIVERY_MIGRATIONS } from './migration-steps-delivery.js';
import { INBOX_MIGRATIONS } from './migration-steps-inbox.js';
import { OAUTH_MIGRATIONS } from './migration-steps-oauth.js';

export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '001_inquiries_and_outbox': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('inquiries')
        .addColumn('reference', 'text', (c) => c.primaryKey())
        .addColumn('first_name', 'text', (c) => c.notNull())
        .addColumn('last_name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('company', 'text')
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text')
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('inquiries_fingerprint').on('inquiries').columns(['fingerprint', 'received_at']).execute();
      await db.schema.createIndex('inquiries_received_at').on('inquiries').column('received_at').execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('reference', 'text', (c) => c.notNull().references('inquiries.reference'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute();

      await db.schema
        .createTable('deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        // The inquiry delivered; null for a service message (see messages, migration 002).
        .addColumn('reference', 'text', (c) => c.references('inquiries.reference'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('run_at', 'bigint', (c) => c.notNull())
        .addColumn('locked_until', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('queued_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .addUniqueConstraint('deliveries_reference_channel', ['reference', 'channel'])
        .execute();
      await db.schema.createIndex('deliveries_due').on('deliveries').columns(['status', 'run_at']).execute();

      await db.schema
        .createTable('delivery_attempts')
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('delivery_attempts_pk', ['delivery_id', 'attempt'])
        .execute();
    },
  },
  '002_agent_auth': {
    async up(db: Kysely<unknown>) {
      // ES256 key pairs as JWKs; the newest unretired one signs, every unretired one verifies.
      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .execute();

      await db.schema
        .createTable('agent_clients')
        .addColumn('client_id', 'text', (c) => c.primaryKey())
        .addColumn('client_name', 'text', (c) => c.notNull())
        .addColumn('client_uri', 'text')
        .addColumn('registration_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('subject', 'text')
        .addColumn('issuer', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();

      // Revocation by token id (RFC 7009), kept until the token would have expired anyway.
      await db.schema
        .createTable('revoked_tokens')
        .addColumn('jti', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint', (c) => c.notNull())
        .execute();

      // Assertions from other issuers redeemed once (replay protection), by issuer and jti.
      await db.schema
        .createTable('used_assertions')
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('jti', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('used_assertions_pk', ['issuer', 'jti'])
        .execute();

      // Service mail (claim codes) goes out through the same outbox as inquiries. The body is
      // blanked once the delivery is finished: a one-time code is not kept longer than needed.
      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('to_address', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('deliveries')
        .addColumn('message_id', 'text', (c) => c.references('messages.id'))
        .execute();

      // A claim: a person taking ownership of a registration (docs/agent-auth.md). Secrets are
      // stored only as hashes.
      await db.schema
        .createTable('agent_claims')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull().references('agent_clients.client_id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('otp_hash', 'text')
        .addColumn('otp_expires_at', 'bigint')
        .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '003_delivery_claim_owner': {
    // Which worker holds a delivery's lease: an attempt is recorded only by the worker that still
    // holds the delivery, so one whose lease ran out and was taken over cannot overwrite the outcome.
    async up(db) {
      await db.schema.alterTable('deliveries').addColumn('locked_by', 'text').execute();
    },
  },
  '004_service_messages_first': {
    // Service messages (claim codes: a person is waiting, and the code expires) are claimed ahead of
    // inquiry mail; this small partial index finds the due ones without walking an inquiry backlog.
    async up(db) {
      await db.schema
        .createIndex('deliveries_due_messages')
        .on('deliveries')
        .columns(['status', 'run_at'])
        .where(sql.ref('message_id'), 'is not', null)
        .execute();
    },
  },
  '005_inquiry_references_checked_at_commit': {
    // PostgreSQL checks an inquiry's deliveries and keys against it at commit (a missing one fails
    // it, 23503), so the intake's inserts sent together may arrive in any order. SQLite runs them
    // in order, and cannot alter a constraint.
    async up(db) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      for (const table of ['deliveries', 'idempotency_keys']) {
        await sql`alter table ${sql.table(table)} alter constraint ${sql.ref(`${table}_reference_fkey`)} deferrable initially deferred`.execute(
          db,
        );
      }
    },
  },
  '006_one_active_client_per_subject': {
    // One active client per person at an ID-JAG issuer (iss, sub): a unique index lets one racing
    // insert win (NULLs are distinct: other registration types never collide). Existing duplicates
    // are settled first: the earliest, the one findClientBySubject returns, stays; later ones are revoked.
    async up(db) {
      await sql`
        update agent_clients set status = 'revoked', revoked_at = ${Date.now()}
        where status = 'active' and issuer is not null and subject is not null and exists (
          select 1 from agent_clients as earlier
          where earlier.issuer = agent_clients.issuer and earlier.subject = agent_clients.subject
            and earlier.status = 'active'
            and (earlier.created_at < agent_clients.created_at
              or (earlier.created_at = agent_clients.created_at and earlier.client_id < agent_clients.client_id)))
      `.execute(db);
      await db.schema
        .createIndex('agent_clients_active_subject')
        .unique()
        .on('agent_clients')
        .columns(['issuer', 'subject'])
        .where(sql.ref('status'), '=', 'active')
        .execute();
    },
  },
  '007_claim_code_sends': {
    // Claim codes mailed, by recipient (trimmed, lower-cased) and by claim: the limits per address
    // and per claim count these rows in the transaction that queues a code, so they hold across
    // instances (src/auth/limits.ts). Purged once no limit counts them.
    async up(db) {
      await db.schema
        .createTable('claim_code_sends')
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('sent_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('claim_code_sends_recipient').on('claim_code_sends').columns(['recipient', 'sent_at']).execute();
      await db.schema.createIndex('claim_code_sends_claim').on('claim_code_sends').columns(['token_hash', 'sent_at']).execute();
    },
  },
  '008_delivery_success_counts': {
    // Successful deliveries per channel, counted where each success is recorded: /metrics reads
    // these few rows instead of counting a table that grows with every inquiry. Successes recorded
    // before this migration are counted once, here.
    async up(db) {
      await db.schema
        .createTable('delivery_successes')
        .addColumn('channel', 'text', (c) => c.primaryKey())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .execute();
      await sql`
        insert into delivery_successes (channel, count)
        select channel, count(*) from deliveries where status = 'succeeded' group by channel
      `.execute(db);
    },
  },
  '009_idempotency_key_outcome': {
    // What a key's first request was answered, created or duplicate (folded into a recent identical
    // inquiry), so that a replay answers the same. Keys without one replay as created.
    async up(db) {
      await db.schema.alterTable('idempotency_keys').addColumn('outcome', 'text').execute();
    },
  },
  '010_deliveries_due_by_channel': {
    // Each channel's deliveries are claimed apart: this finds one channel's due ones without walking
    // another's backlog (mail piling up while a mail server is down). It replaces (status, run_at),
    // which nothing reads any more.
    async up(db) {
      await db.schema.createIndex('deliveries_due_by_channel').on('deliveries').columns(['status', 'channel', 'run_at']).execute();
      await db.schema.dropIndex('deliveries_due').ifExists().execute();
    },
  },
  '011_service_messages_due_by_channel': {
    // A claim asks for one channel's due service messages: the partial index of 004 gains the
    // channel, so that claim never walks the channel's due inquiry backlog.
    async up(db) {
      await db.schema
        .createIndex('deliveries_due_messages_by_channel')
        .on('deliveries')
        .columns(['status', 'channel', 'run_at'])
        .where(sql.ref('message_id'), 'is not', null)
        .execute();
      await db.schema.dropIndex('deliveries_due_messages').ifExists().execute();
    },
  },
  '012_claim_code_sends_by_domain': {
    // The caps per domain and on all codes mailed count by these indexes (src/auth/limits.ts). A
    // row's domain follows its recipient's last "@" (portable SQL: rtrim drops every non-"@" on the right).
    async up(db) {
      await db.schema.alterTable('claim_code_sends').addColumn('domain', 'text').execute();
      await sql`update claim_code_sends set domain = substr(recipient, length(rtrim(recipient, replace(recipient, '@', ''))) + 1)`.execute(
        db,
      );
      await sql`update claim_code_sends set domain = 'gmail.com' where domain = 'googlemail.com'`.execute(db);
      await db.schema.createIndex('claim_code_sends_domain').on('claim_code_sends').columns(['domain', 'sent_at']).execute();
      await db.schema.createIndex('claim_code_sends_sent').on('claim_code_sends').column('sent_at').execute();
    },
  },
  '013_inquiry_verdicts': {
    // The spam verdict stored with each inquiry (docs/spam.md): rows older than the filter are inbox.
    // Reasons are a JSON array of {code, detail}.
    async up(db) {
      await db.schema
        .alterTable('inquiries')
        .addColumn('verdict', 'text', (c) => c.notNull().defaultTo('inbox'))
        .execute();
      await db.schema
        .alterTable('inquiries')
        .addColumn('spam_score', 'double precision', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('inquiries')
        .addColumn('spam_reasons', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
    },
  },
  '014_inquiry_body_hashes': {
    // The same message from other addresses within an hour counts as spam (repeated_message): each
    // inquiry keeps its body's hash (null for older rows and short bodies), found by this index.
    async up(db) {
      await db.schema.alterTable('inquiries').addColumn('body_hash', 'text').execute();
      await db.schema
        .createIndex('inquiries_body_hash')
        .on('inquiries')
        .columns(['body_hash', 'received_at'])
        .where(sql.ref('body_hash'), 'is not', null)
        .execute();
    },
  },
  '015_proof_of_work': {
    // The contact page's proof of work (docs/spam.md): secrets made once and shared by every
    // instance (the challenges' HMAC key), and the proofs used, kept until their challenge expires
    // so that a replay is seen by any instance.
    async up(db) {
      await db.schema
        .createTable('service_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('spent_proofs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('spent_proofs_expires_at').on('spent_proofs').column('expires_at').execute();
    },
  },
  '016_quarantine_digests': {
    // The quarantine digest (docs/spam.md): one row per digest taken, its period unique so that one
    // instance takes it (null for `digest --send`); on an inquiry, the digest that took it since it
    // was quarantined, and when a move (`spam REF`) quarantined it after its receipt.
    async up(db) {
      await db.schema
        .createTable('quarantine_digests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('period', 'text', (c) => c.unique())
        .addColumn('taken_at', 'bigint', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('inquiries').addColumn('quarantined_at', 'bigint').execute();
      await db.schema.alterTable('inquiries').addColumn('digest_id', 'text').execute();
      // What the next digest takes, found without reading the inbox; and what a digest took.
      await db.schema
        .createIndex('inquiries_undigested_spam')
        .on('inquiries')
        .column('received_at')
        .where(sql<boolean>`verdict = 'spam' and digest_id is null`)
        .execute();
      await db.schema
        .createIndex('inquiries_digest')
        .on('inquiries')
        .column('digest_id')
        .where(sql.ref('digest_id'), 'is not', null)
        .execute();
    },
  },
  '017_retention_indexes': {
    // The hourly retention (src/maintenance.ts) finds one verdict's oldest inquiries without walking
    // the other's kept ones, a service message's deliveries (erase and export too), and a client's claims.
    async up(db) {
      await db.schema.createIndex('inquiries_verdict_received_at').on('inquiries').columns(['verdict', 'received_at']).execute();
      await db.schema
        .createIndex('deliveries_message')
        .on('deliveries')
        .column('message_id')
        .where(sql.ref('message_id'), 'is not', null)
        .execute();
      await db.schema.createIndex('agent_claims_client').on('agent_claims').column('client_id').execute();
    },
  },
  '018_personal_data_by_address': {
    // Erase and export find one person's rows by address in any case (docs/operations.md, "Personal
    // data"): lower(address) indexed where it is kept, so that neither reads a whole table.
    async up(db) {
      for (const [index, table, column] of [
        ['inquiries_email_lower', 'inquiries', 'email'],
        ['agent_clients_email_lower', 'agent_clients', 'email'],
        ['agent_claims_email_lower', 'agent_claims', 'email'],
        ['messages_to_address_lower', 'messages', 'to_address'],
      ] as const) {
        await db.schema
          .createIndex(index)
          .on(table)
          .expression(sql`lower(${sql.ref(column)})`)
          .execute();
      }
    },
  },
  '019_inquiry_releases': {
    // When `release REF` last took an inquiry out of the quarantine (null otherwise): shown by `show`.
    async up(db) {
      await db.schema.alterTable('inquiries').addColumn('released_at', 'bigint').execute();
    },
  },
  '020_inquiry_sources': {
    // Which door an inquiry came through (page, api, mcp): the studio's mail and inbox show it.
    async up(db) {
      await db.schema.alterTable('inquiries').addColumn('source', 'text').execute();
    },
  },
  ...INBOX_MIGRATIONS,
  ...DELIVERY_MIGRATIONS,
  ...OAUTH_MIGRATIONS,
};

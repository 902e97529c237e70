// Migrations on each backend: a database a newer release has migrated is refused, and an upgrade is
// applied whole or not at all.
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, openExistingDatabase } from '../../src/storage/database.js';
import { readSchemaVersion } from '../../src/storage/migrations.js';
import type { Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, type FreshDatabase, storePerTest } from '../helpers/databases.js';
import { takeBackBefore } from '../helpers/older-release.js';

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let database: FreshDatabase;
  async function openTempStore(): Promise<Store> {
    ({ store, database } = await stores.open());
    return store;
  }

  it('refuses a database that a newer release has migrated, naming the migration it does not know', async () => {
    await openTempStore();
    await store.close();
    const opened = await openDatabase(database.config);
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_a_newer_release', '2099-01-01T00:00:00.000Z')`.execute(
      opened.db,
    );
    await opened.db.destroy();
    await expect(openDatabase(database.config)).rejects.toThrow(
      'DATABASE_URL: the database has migration 999_from_a_newer_release, which this release does not know',
    );
  });

  it('applies an upgrade whole or not at all: one that fails partway leaves the database as it was, and the next start applies it', async () => {
    database = await fresh();
    await (await openDatabase(database.config)).db.destroy();
    // The database as a release before 008 left it, with its deliveries table out of reach, so
    // that 008 fails after its first statement (the table it creates) and before its record.
    const older = await openExistingDatabase(database.config);
    await takeBackBefore(older.db, '008');
    // Codes an older release recorded: 012 gives each the domain after its recipient's last "@".
    for (const recipient of ['j.doe@googlemail.com', 'owner@example.org']) {
      await sql`insert into claim_code_sends (recipient, token_hash, sent_at, expires_at) values (${recipient}, 'h', 1, 2)`.execute(
        older.db,
      );
    }
    await sql`alter table deliveries rename to deliveries_away`.execute(older.db);
    await older.db.destroy();
    await expect(openDatabase(database.config)).rejects.toThrow('database migration 008_delivery_success_counts failed');

    const kept = await openExistingDatabase(database.config);
    expect((await readSchemaVersion(kept.db as unknown as Kysely<unknown>)).applied.filter((name) => name >= '008')).toEqual([]);
    await sql`alter table deliveries_away rename to deliveries`.execute(kept.db);
    await kept.db.destroy();
    const upgraded = await openDatabase(database.config);
    store = createStore(upgraded);
    expect((await readSchemaVersion(upgraded.db as unknown as Kysely<unknown>)).applied.filter((name) => name >= '008')).toEqual([
      '008_delivery_success_counts',
      '009_idempotency_key_outcome',
      '010_deliveries_due_by_channel',
      '011_service_messages_due_by_channel',
      '012_claim_code_sends_by_domain',
      '013_inquiry_verdicts',
      '014_inquiry_body_hashes',
      '015_proof_of_work',
      '016_quarantine_digests',
      '017_retention_indexes',
      '018_personal_data_by_address',
      '019_inquiry_releases',
      '020_inquiry_sources',
      '025_channel_health',
      '026_delivery_alerts',
      '027_oauth_clients',
      '028_oauth_authorizations',
      '029_oauth_refresh_tokens',
    ]);
    expect(await store.outbox.countByStatus()).toEqual({ pending: 0, succeeded: 0, failed: 0, dead: 0 });
    const domains = await upgraded.db.selectFrom('claim_code_sends').select(['recipient', 'domain']).orderBy('recipient').execute();
    expect(domains).toEqual([
      { recipient: 'j.doe@googlemail.com', domain: 'gmail.com' },
      { recipient: 'owner@example.org', domain: 'example.org' },
    ]);
  });
});

// The delivery health's migrations (docs/delivery.md, "Health and alerts"), spread into MIGRATIONS.
import { type Kysely, type Migration, sql } from 'kysely';

export const DELIVERY_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '025_channel_health': {
    // Each channel's last success, last failure (and its error) and since when every attempt has
    // failed, kept on its row of success counts by the same statement that counts a success. The
    // last success is taken from the deliveries; failures before this migration are not known.
    async up(db: Kysely<unknown>) {
      for (const [column, type] of [
        ['last_success_at', 'bigint'],
        ['last_failure_at', 'bigint'],
        ['last_error', 'text'],
        ['failing_since', 'bigint'],
      ] as const) {
        await db.schema.alterTable('delivery_successes').addColumn(column, type).execute();
      }
      await sql`
        update delivery_successes set last_success_at = (
          select max(finished_at) from deliveries
          where deliveries.channel = delivery_successes.channel and deliveries.status = 'succeeded'
        )
      `.execute(db);
    },
  },
  '026_delivery_alerts': {
    // Each channel's last alert and whether its recovery was told, shared by every instance.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('delivery_alerts')
        .addColumn('channel', 'text', (c) => c.primaryKey())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('alerted_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

// Each channel's last delivery alert, read and written in the caller's transaction (docs/delivery.md).
import type { Executor } from './executor.js';
import type { DeliveryAlertStore } from './ports.js';

export function createAlertStore(q: Executor): DeliveryAlertStore {
  return {
    async find(channel, tx) {
      const row = await q(tx).selectFrom('delivery_alerts').selectAll().where('channel', '=', channel).executeTakeFirst();
      return row && { channel: row.channel, state: row.state, alertedAt: new Date(Number(row.alerted_at)) };
    },
    async save({ channel, state, alertedAt }, tx) {
      await q(tx)
        .insertInto('delivery_alerts')
        .values({ channel, state, alerted_at: alertedAt.getTime() })
        .onConflict((oc) => oc.column('channel').doUpdateSet({ state, alerted_at: alertedAt.getTime() }))
        .execute();
    },
  };
}

// The alerts' state on each backend: an alert queued with its state in one transaction, told once per
// outage; on PostgreSQL, two instances deciding at once queue one alert between them.
import { describe, expect, it } from 'vitest';
import { queueAlert } from '../../src/delivery/alerts.js';
import type { ChannelHealth } from '../../src/delivery/health.js';
import { openDatabase } from '../../src/storage/database.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, freshPostgres, storePerTest } from '../helpers/databases.js';

const now = new Date('2026-11-27T14:05:00Z');
const failing: ChannelHealth = {
  channel: 'webhook',
  pending: 1,
  retrying: 2,
  dead: 0,
  failed: 0,
  lastError: { message: 'webhook answered HTTP 503', at: now },
  lastSuccessAt: null,
  failingSince: new Date(now.getTime() - 16 * 60_000),
  alerting: true,
  reason: 'failing',
};
const healthy: ChannelHealth = { ...failing, failingSince: null, alerting: false, reason: null, lastSuccessAt: now };
const route = { channel: 'email', to: 'studio@example.com' } as const;
const options = { now, timeZone: 'UTC' };

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('queues the alert and its recovery as service mail, once each', async () => {
    const { store } = await stores.open();
    expect(await queueAlert(store, failing, route, options)).toMatchObject({ about: 'webhook', news: 'alerting', channel: 'email' });
    expect(await queueAlert(store, failing, route, options)).toBeNull();
    expect(await queueAlert(store, healthy, route, options)).toMatchObject({ news: 'recovered' });
    expect(await queueAlert(store, healthy, route, options)).toBeNull();
    const due = await store.outbox.claimDue(now, 10, 60_000, 'worker');
    const mails = due.map(({ payload }) => (payload.kind === 'message' ? `${payload.message.to}: ${payload.message.subject}` : ''));
    expect(mails.sort()).toEqual([
      'studio@example.com: Inquiries are not reaching your webhook',
      'studio@example.com: Inquiries reach your webhook again',
    ]);
  });
});

describe('on PostgreSQL, two instances', () => {
  const stores = storePerTest(freshPostgres);

  it('queue one alert between them when both decide at once', async () => {
    const { store, database } = await stores.open();
    const other = createStore(await openDatabase(database.config));
    try {
      const outcomes = await Promise.all([
        ...Array.from({ length: 4 }, () => queueAlert(store, failing, route, options)),
        ...Array.from({ length: 4 }, () => queueAlert(other, failing, route, options)),
      ]);
      expect(outcomes.filter((outcome) => outcome !== null)).toHaveLength(1);
      expect(await store.outbox.claimDue(now, 10, 60_000, 'worker')).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

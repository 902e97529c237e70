// The delivery alerts (docs/delivery.md, "Health and alerts"): when a channel alerts (health.ts), the
// studio is told through the other channel, once per outage and at most once an hour, and once more
// when it recovers. The state is in the database, decided under a lock: one alert for all instances.

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type PeriodicCheck, periodicCheck } from '../periodic.js';
import type { DeliveryAlertState, ServiceMessage, Store } from '../storage/ports.js';
import { ALERT_EVENT_TYPE, type AlertNews, alertEvent, alertMail } from './alert-text.js';
import { type ChannelHealth, deliveryHealth } from './health.js';
import { type OutageNotice, outageNotice } from './outage-notice.js';

/** The least time between two alerts about one channel (a recovery is told whenever it comes). */
export const ALERT_INTERVAL_MS = 60 * 60_000;

/** Where the alerts about a channel go: a mail to the studio's inbox, or a webhook event. */
export type AlertRoute = { readonly channel: 'email'; readonly to: string } | { readonly channel: 'webhook' };

/** By failing channel, where its alerts go: the other channel, where it is configured. */
export function alertRoutes({ inquiryTo, webhook }: { inquiryTo: string | null; webhook: boolean }): ReadonlyMap<string, AlertRoute> {
  const routes = new Map<string, AlertRoute>();
  if (inquiryTo !== null && webhook) {
    routes.set('webhook', { channel: 'email', to: inquiryTo });
    routes.set('email', { channel: 'webhook' });
  }
  return routes;
}

/** What to tell about a channel now, given its last alert: its outage (an hour after the last at the soonest), its recovery, or nothing. */
export function decideAlert(health: ChannelHealth, state: DeliveryAlertState | undefined, now: Date): AlertNews | null {
  if (!health.alerting) return state?.state === 'alerting' ? 'recovered' : null;
  if (state === undefined) return 'alerting';
  if (state.state === 'alerting' || now.getTime() - state.alertedAt.getTime() < ALERT_INTERVAL_MS) return null;
  return 'alerting';
}

export interface QueuedAlert {
  readonly id: string;
  readonly about: string;
  readonly news: AlertNews;
  readonly channel: AlertRoute['channel'];
}

/** Decides, under the channel's lock, what to tell about it, and queues that on `route` in the same transaction. */
export async function queueAlert(
  store: Pick<Store, 'transaction' | 'outbox' | 'alerts'>,
  health: ChannelHealth,
  route: AlertRoute,
  { now, timeZone }: { now: Date; timeZone: string },
): Promise<QueuedAlert | null> {
  const about = health.channel;
  return store.transaction(
    async (tx) => {
      const state = await store.alerts.find(about, tx);
      const news = decideAlert(health, state, now);
      if (news === null) return null;
      const id = randomUUID();
      const message: ServiceMessage =
        route.channel === 'email'
          ? { id, to: route.to, ...alertMail(news, health, timeZone) }
          : { id, to: '', subject: ALERT_EVENT_TYPE, body: JSON.stringify(alertEvent(news, health, now)) };
      await store.outbox.enqueueMessage(message, route.channel, now, tx);
      await store.alerts.save({ channel: about, state: news, alertedAt: news === 'alerting' ? now : (state?.alertedAt ?? now) }, tx);
      return { id, about, news, channel: route.channel };
    },
    { lock: [`delivery-alert:${about}`] },
  );
}

export interface DeliveryAlertsOptions {
  readonly store: Pick<Store, 'transaction' | 'outbox' | 'alerts'>;
  /** The configured channels, whose health is watched. */
  readonly channels: readonly string[];
  readonly routes: ReadonlyMap<string, AlertRoute>;
  readonly timeZone: string;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  readonly now?: () => Date;
  /** How often to look (a minute). */
  readonly checkIntervalMs?: number;
  /** Called once an alert is queued (committed): wakes the worker. */
  readonly onQueued?: (alert: QueuedAlert) => void;
}

export type DeliveryAlerts = PeriodicCheck;

const DEFAULT_CHECK_INTERVAL_MS = 60_000;

export function createDeliveryAlerts(options: DeliveryAlertsOptions): DeliveryAlerts {
  const { store, channels, routes, timeZone, logger, onQueued } = options;
  const now = options.now ?? (() => new Date());
  // Each instance logs a channel's alert once, and its end, whether or not another channel can tell the studio.
  const logged = new Map<string, OutageNotice>(
    channels.map((channel) => [
      channel,
      outageNotice(
        (health) => {
          const { reason, failingSince, lastError } = health as ChannelHealth;
          logger.warn(
            { channel, reason, failingSince, lastError },
            `the ${channel} channel is failing; see docs/delivery.md, "Health and alerts"`,
          );
        },
        () => logger.info({ channel }, `the ${channel} channel delivers again`),
      ),
    ]),
  );
  const looking = outageNotice(
    (error) => logger.warn({ err: error }, 'could not check the delivery health; will try again every minute'),
    () => logger.info('the delivery health can be checked again'),
  );

  const look = async (): Promise<void> => {
    try {
      const at = now();
      for (const health of await deliveryHealth(store.outbox, channels, at)) {
        if (health.alerting) logged.get(health.channel)?.failed(health);
        else logged.get(health.channel)?.succeeded();
        const route = routes.get(health.channel);
        const queued = route && (await queueAlert(store, health, route, { now: at, timeZone }));
        if (queued) {
          logger.info({ alert: queued.id, about: queued.about, news: queued.news, channel: queued.channel }, 'delivery alert queued');
          onQueued?.(queued);
        }
      }
      looking.succeeded();
    } catch (error) {
      looking.failed(error);
    }
  };

  return periodicCheck(look, options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS, channels.length > 0);
}

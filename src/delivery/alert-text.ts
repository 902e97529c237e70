// The delivery alert's words (docs/delivery.md, "Health and alerts"): the plain-text mail sent when the
// webhook fails, and the webhook event sent when email fails. Pure: no store, no clock.
import { studioTime } from '../studio/time.js';
import type { ChannelHealth } from './health.js';

/** The webhook event that tells of a failing (or recovered) email channel. */
export const ALERT_EVENT_TYPE = 'inquiry.delivery_alert';

/** What is told: the channel alerts, or it alerted and has recovered. */
export type AlertNews = 'alerting' | 'recovered';

const CHANNEL_NAMES: Record<string, string> = { email: 'email', webhook: 'webhook' };
const channelName = (channel: string) => CHANNEL_NAMES[channel] ?? channel;

const deliveries = (count: number) => (count === 1 ? '1 delivery' : `${count} deliveries`);

/** The mail to the studio's inbox about another channel: subject and plain-text body. */
export function alertMail(news: AlertNews, health: ChannelHealth, timeZone: string): { subject: string; body: string } {
  const name = channelName(health.channel);
  if (news === 'recovered') {
    const since = health.lastSuccessAt === null ? '' : ` since ${studioTime(health.lastSuccessAt, timeZone)}`;
    return {
      subject: `Inquiries reach your ${name} again`,
      body: `The ${name} channel delivers again${since}.\n\nPending: ${health.pending} · retrying: ${health.retrying} · given up: ${health.dead + health.failed}\n`,
    };
  }
  const lines = [
    health.reason === 'failing' && health.failingSince !== null
      ? `Every attempt to deliver to your ${name} has failed since ${studioTime(health.failingSince, timeZone)}.`
      : `A delivery to your ${name} was given up.`,
    'The inquiries are safe in the database and the service keeps trying; those given up wait for `studio-inquiry requeue`.',
    '',
    health.lastError === null
      ? 'Last error: none recorded'
      : `Last error (${studioTime(health.lastError.at, timeZone)}): ${health.lastError.message}`,
    `Pending: ${health.pending} · retrying: ${health.retrying} · given up: ${deliveries(health.dead + health.failed)}`,
    '',
    'You are told again when it recovers, and at most once an hour of a new failure.',
  ];
  return { subject: `Inquiries are not reaching your ${name}`, body: `${lines.join('\n')}\n` };
}

/** The webhook event about another channel. `timestamp` is when the alert was queued: every attempt sends the same body. */
export function alertEvent(news: AlertNews, health: ChannelHealth, at: Date) {
  return {
    type: ALERT_EVENT_TYPE,
    timestamp: at.toISOString(),
    data: {
      channel: health.channel,
      state: news,
      reason: news === 'alerting' ? health.reason : null,
      failingSince: health.failingSince?.toISOString() ?? null,
      lastError: health.lastError && { message: health.lastError.message, at: health.lastError.at.toISOString() },
      lastSuccessAt: health.lastSuccessAt?.toISOString() ?? null,
      pending: health.pending,
      retrying: health.retrying,
      dead: health.dead,
      failed: health.failed,
    },
  };
}

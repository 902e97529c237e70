// Delivery health as the inbox shows it (src/delivery/health.ts decides it): a table per channel on
// the overview, and a banner on every page while a channel alerts, naming it and its last error.
import type { ChannelHealth } from '../../delivery/health.js';
import { escapeHtml as e } from '../html.js';
import { timeTag } from './parts.js';

const CHANNEL_NAMES: Readonly<Record<string, string>> = { email: 'Email', webhook: 'Webhook' };
const channelName = (channel: string) => CHANNEL_NAMES[channel] ?? channel;

function state(health: ChannelHealth, timeZone: string): string {
  if (health.reason === 'failing')
    return `<strong class="error-text">Failing</strong> since ${timeTag(health.failingSince as Date, timeZone)}`;
  if (health.reason === 'given-up') return '<strong class="error-text">Gave up on a delivery</strong> since its last success';
  if (health.failingSince !== null) return `Failing since ${timeTag(health.failingSince, timeZone)}, retrying`;
  return health.lastSuccessAt === null ? 'No delivery yet' : `Working (last delivery ${timeTag(health.lastSuccessAt, timeZone)})`;
}

export function healthSection(channels: readonly ChannelHealth[], timeZone: string): string {
  if (channels.length === 0) return '<p>No delivery channel is configured: inquiries are kept here only.</p>';
  const rows = channels
    .map(
      (health) =>
        `<tr><th scope="row">${e(channelName(health.channel))}</th><td>${state(health, timeZone)}</td><td>${health.pending}</td><td>${health.retrying}</td><td>${health.dead}</td><td>${health.failed}</td><td>${health.lastError === null ? '<span class="muted">none</span>' : `<span class="error-text">${e(health.lastError.message)}</span> ${timeTag(health.lastError.at, timeZone)}`}</td></tr>`,
    )
    .join('');
  return `<div class="table-scroll" role="region" aria-labelledby="health-caption" tabindex="0"><table>
<caption id="health-caption">Each channel's deliveries now</caption>
<thead><tr><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Pending</th><th scope="col">Retrying</th><th scope="col">Given up</th><th scope="col">Refused</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

/** The banner of the channels that alert; empty when none does. */
export function alertBanner(channels: readonly ChannelHealth[], root: string, timeZone: string): string {
  const alerting = channels.filter((health) => health.alerting);
  if (alerting.length === 0) return '';
  const lines = alerting.map((health) => {
    const what =
      health.reason === 'failing' ? `has been failing since ${timeTag(health.failingSince as Date, timeZone)}` : 'gave up on a delivery';
    const error = health.lastError === null ? '' : ` Last error: ${e(health.lastError.message)}`;
    return `<p><strong>${e(channelName(health.channel))} delivery ${what}.</strong>${error}</p>`;
  });
  return `<aside class="banner" aria-label="Delivery alerts">
${lines.join('\n')}
<p><a href="${e(root)}/overview#health">Delivery health</a></p>
</aside>`;
}

// Pieces the inbox's pages share: status, source and delivery state in words (never colour alone),
// times, and a message's first line.
import { SOURCE_NAMES } from '../../inquiries/source.js';
import type { DeliveryRecord, InquiryRecord } from '../../storage/ports.js';
import type { InboxStatus } from '../../storage/ports-inbox.js';
import { studioTimeShort } from '../../studio/time.js';
import { escapeHtml as e } from '../html.js';

const FIRST_LINE_MAX = 120;

export const STATUS_LABELS: Readonly<Record<InboxStatus, string>> = { new: 'New', read: 'Read', archived: 'Archived', spam: 'Spam' };

export function statusBadge(status: InboxStatus): string {
  return `<span class="badge badge--${status}">${STATUS_LABELS[status]}</span>`;
}

/** A time as the inbox shows it (the studio's time zone, to the minute), machine-readable in `datetime`. */
export function timeTag(date: Date, timeZone: string): string {
  return `<time datetime="${date.toISOString()}">${e(studioTimeShort(date, timeZone))}</time>`;
}

/** Where it came from, and the agent's name when an agent sent it. */
export function sourceText(inquiry: Pick<InquiryRecord, 'source'>, agentName: string | null, verifiedEmail: string | null = null): string {
  const door = inquiry.source ? SOURCE_NAMES[inquiry.source] : 'unknown';
  const person = verifiedEmail ? ` (its person verified as ${e(verifiedEmail)})` : '';
  return agentName ? `${e(door)}, agent ${e(agentName)}${person}` : e(door);
}

/** A delivery's state in a word or two. */
export function deliveryState({ status, attempts }: Pick<DeliveryRecord, 'status' | 'attempts'>): string {
  if (status === 'succeeded') return 'delivered';
  if (status === 'failed') return 'failed';
  if (status === 'dead') return 'given up';
  return attempts === 0 ? 'queued' : `retrying (${attempts} tries)`;
}

/** Each channel's state, at a glance: `email delivered · webhook retrying`. */
export function deliveryGlance(deliveries: readonly DeliveryRecord[]): string {
  if (deliveries.length === 0) return '<span class="muted">none</span>';
  return deliveries
    .map((delivery) => {
      const tone = delivery.status === 'succeeded' ? 'ok' : delivery.status === 'pending' ? 'wait' : 'bad';
      return `<span class="delivery delivery--${tone}">${e(delivery.channel)} ${deliveryState(delivery)}</span>`;
    })
    .join(' ');
}

export function firstLine(message: string): string {
  const line = message.trim().split(/\r?\n/, 1)[0] ?? '';
  const characters = [...line];
  return characters.length > FIRST_LINE_MAX ? `${characters.slice(0, FIRST_LINE_MAX - 1).join('')}…` : line;
}

export const fullName = (inquiry: Pick<InquiryRecord, 'firstName' | 'lastName'>) => `${inquiry.firstName} ${inquiry.lastName}`;

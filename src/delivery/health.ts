// Each configured channel's delivery health, and whether it calls for an alert: the inbox shows it,
// the alerts act on it (docs/delivery.md, "Health and alerts").
import type { ChannelHealthFacts, Outbox } from '../storage/ports.js';

/** How long every attempt of a channel must have failed before it alerts. */
export const FAILING_ALERT_MS = 15 * 60_000;

/** Why a channel alerts: failing for FAILING_ALERT_MS, or a delivery given up (dead) since its last success. */
export type AlertReason = 'failing' | 'given-up';

export interface ChannelHealth {
  readonly channel: string;
  /** Pending deliveries never tried yet. */
  readonly pending: number;
  /** Pending deliveries that failed at least once and will be tried again. */
  readonly retrying: number;
  /** Deliveries given up after their retry window. */
  readonly dead: number;
  /** Deliveries the other side refused for good. */
  readonly failed: number;
  readonly lastError: { readonly message: string; readonly at: Date } | null;
  readonly lastSuccessAt: Date | null;
  /** Since when every attempt has failed; null when the last attempt succeeded, or none was made. */
  readonly failingSince: Date | null;
  readonly alerting: boolean;
  /** Why it alerts; null when it does not. */
  readonly reason: AlertReason | null;
}

/** What the store says of a channel no delivery has used yet. */
export const NOTHING_KNOWN = (channel: string): ChannelHealthFacts => ({
  channel,
  waiting: 0,
  retrying: 0,
  dead: 0,
  failed: 0,
  lastGivenUpAt: null,
  lastSuccessAt: null,
  lastFailure: null,
  failingSince: null,
});

/** Why a channel alerts at `now`, or null: failing long enough comes first. */
export function alertReason(facts: ChannelHealthFacts, now: Date): AlertReason | null {
  if (facts.failingSince !== null && now.getTime() - facts.failingSince.getTime() >= FAILING_ALERT_MS) return 'failing';
  const { lastGivenUpAt, lastSuccessAt } = facts;
  if (lastGivenUpAt !== null && (lastSuccessAt === null || lastGivenUpAt > lastSuccessAt)) return 'given-up';
  return null;
}

/** One channel's health at `now` from what the store knows of it (nothing: a channel never used). */
export function judgeChannel(channel: string, facts: ChannelHealthFacts | undefined, now: Date): ChannelHealth {
  const known = facts ?? NOTHING_KNOWN(channel);
  const reason = alertReason(known, now);
  return {
    channel,
    pending: known.waiting,
    retrying: known.retrying,
    dead: known.dead,
    failed: known.failed,
    lastError: known.lastFailure && { message: known.lastFailure.error, at: known.lastFailure.at },
    lastSuccessAt: known.lastSuccessAt,
    failingSince: known.failingSince,
    alerting: reason !== null,
    reason,
  };
}

/** The health of each of `channels` (the configured ones, e.g. email and webhook), in their order. */
export async function deliveryHealth(outbox: Pick<Outbox, 'health'>, channels: readonly string[], now: Date): Promise<ChannelHealth[]> {
  const facts = await outbox.health();
  return channels.map((channel) =>
    judgeChannel(
      channel,
      facts.find((known) => known.channel === channel),
      now,
    ),
  );
}

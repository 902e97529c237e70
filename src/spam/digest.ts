// Taking the quarantine digest (docs/spam.md): what went to the quarantine since the last digest,
// queued as one service message in the transaction that takes it, so it is sent, retried and kept
// through a crash as any other delivery, and no inquiry is taken by two digests.
import { randomUUID } from 'node:crypto';
import type { ServiceMessage, Store } from '../storage/ports.js';
import { DIGEST_EVENT_TYPE, DIGEST_LISTED_MAX, digestEvent, digestMail } from './digest-text.js';

/** Where a digest goes: by email to the studio's inbox when mail is configured, else to the webhook. */
export type DigestRoute = { readonly channel: 'email'; readonly to: string } | { readonly channel: 'webhook' };

export function digestRoute({ inquiryTo, webhook }: { inquiryTo: string | null; webhook: boolean }): DigestRoute | null {
  if (inquiryTo !== null) return { channel: 'email', to: inquiryTo };
  return webhook ? { channel: 'webhook' } : null;
}

export type DigestOutcome =
  /** The period's digest was taken already, by this instance or another. */
  | { readonly kind: 'taken' }
  /** Nothing went to the quarantine since the last digest: nothing queued. */
  | { readonly kind: 'empty' }
  | {
      readonly kind: 'queued';
      readonly id: string;
      readonly channel: DigestRoute['channel'];
      /** The inquiries it took; `listed` are those it names. */
      readonly total: number;
      readonly listed: readonly string[];
    };

/**
 * Takes the digest of `period` (the schedule's UTC day, or null for one asked for now) and queues it
 * on `route`'s channel. The service's worker sends it.
 */
export async function queueDigest(
  store: Pick<Store, 'transaction' | 'digests' | 'outbox'>,
  route: DigestRoute,
  { period, now }: { period: string | null; now: Date },
): Promise<DigestOutcome> {
  const id = randomUUID();
  return store.transaction(async (tx): Promise<DigestOutcome> => {
    const contents = await store.digests.take({ id, period, at: now, limit: DIGEST_LISTED_MAX }, tx);
    if (contents === null) return { kind: 'taken' };
    if (contents.total === 0) return { kind: 'empty' };
    const message: ServiceMessage =
      route.channel === 'email'
        ? { id, to: route.to, ...digestMail(contents) }
        : { id, to: '', subject: DIGEST_EVENT_TYPE, body: JSON.stringify(digestEvent(contents, now)) };
    await store.outbox.enqueueMessage(message, route.channel, now, tx);
    const listed = contents.listed.map((entry) => entry.inquiry.reference);
    return { kind: 'queued', id, channel: route.channel, total: contents.total, listed };
  });
}

const HOUR_MS = 3_600_000;

/** The schedule's period at `now`: the UTC day of the latest `hourUtc`:00 at or before it (YYYY-MM-DD). */
export function digestPeriod(now: Date, hourUtc: number): string {
  return new Date(now.getTime() - hourUtc * HOUR_MS).toISOString().slice(0, 10);
}

// What the inbox does with inquiries (docs/inbox.md), for its HTTP door: the listing, one inquiry in
// full, its state, spam / not spam, requeue, erase and export. The same domain code as the CLI's.

import { type ChannelHealth, deliveryHealth } from '../delivery/health.js';
import { type MoveOutcome, moveInquiry } from '../inquiries/verdicts.js';
import { type EraseOutcome, erasePerson } from '../personal-data/erase.js';
import { senderOf } from '../personal-data/subject.js';
import type { PersonalDataStore } from '../storage/personal-data-ports.js';
import type { DeliveryAttempt, DeliveryRecord, InquiryVerdict, Store } from '../storage/ports.js';
import type { DailyCount, InboxEntry, InboxInquiry, InboxQuery, InboxState, InboxStore } from '../storage/ports-inbox.js';

/** How many inquiries an export reads at a time. */
const EXPORT_PAGE_SIZE = 500;
const DAY_MS = 86_400_000;
export const OVERVIEW_DAYS = 90;

export interface InboxServiceDeps {
  readonly store: Pick<Store, 'inquiries' | 'outbox'>;
  readonly inbox: InboxStore;
  readonly personalData: PersonalDataStore;
  /** The delivery channels configured: a release queues one delivery on each. */
  readonly channels: readonly string[];
  /** Wakes the delivery worker once something is queued. */
  readonly wake: () => void;
  /** How long an erase waits for a delivery being sent (the delivery lease). */
  readonly eraseWaitMs: number;
  readonly now?: () => Date;
}

/** An entry with its deliveries: a row of the list. */
export interface ListedInquiry extends InboxEntry {
  readonly deliveries: readonly DeliveryRecord[];
}

export interface InquiryInFull extends InboxInquiry {
  readonly attempts: ReadonlyMap<string, readonly DeliveryAttempt[]>;
}

export type InboxService = ReturnType<typeof createInboxService>;

export function createInboxService(deps: InboxServiceDeps) {
  const now = deps.now ?? (() => new Date());

  async function withDeliveries(entries: readonly InboxEntry[]): Promise<ListedInquiry[]> {
    const deliveries = await deps.store.outbox.forReferences(entries.map((entry) => entry.inquiry.reference));
    return entries.map((entry) => ({
      ...entry,
      deliveries: deliveries.filter((delivery) => delivery.reference === entry.inquiry.reference),
    }));
  }

  return {
    list: async (query: InboxQuery) => withDeliveries(await deps.inbox.list(query)),

    async find(reference: string): Promise<InquiryInFull | undefined> {
      const inquiry = await deps.inbox.find(reference);
      if (!inquiry) return undefined;
      const attempts = new Map(
        await Promise.all(
          inquiry.deliveries.map(async (delivery) => [delivery.id, await deps.store.outbox.attempts(delivery.id)] as const),
        ),
      );
      return { ...inquiry, attempts };
    },

    setState: (reference: string, state: InboxState) => deps.inbox.setState(reference, state),

    /** Spam, or not spam: a release queues its deliveries and wakes the worker. */
    async move(reference: string, verdict: InquiryVerdict): Promise<MoveOutcome> {
      const outcome = await moveInquiry(deps.store, reference, verdict, deps.channels, now());
      if (outcome.kind === 'moved' && verdict === 'inbox') deps.wake();
      return outcome;
    },

    /** Puts the inquiry's failed and dead deliveries back in the queue; how many. */
    async requeue(reference: string): Promise<number> {
      const count = await deps.store.outbox.requeue(now(), reference);
      if (count > 0) deps.wake();
      return count;
    },

    /** Erases everything held about the sender of `reference` (the CLI's erase); undefined for no inquiry. */
    async erase(reference: string): Promise<(EraseOutcome & { email: string }) | undefined> {
      const subject = await senderOf(deps.personalData, reference);
      if (subject === undefined) return undefined;
      const outcome = await erasePerson(deps.personalData, subject, { waitMs: deps.eraseWaitMs, now });
      return { ...outcome, email: subject.email };
    },

    /** Every inquiry the query matches (its limit is the page read at a time), newest first. */
    async *all(query: Omit<InboxQuery, 'limit' | 'after'>): AsyncGenerator<ListedInquiry> {
      let after: InboxQuery['after'];
      while (true) {
        const page = await withDeliveries(await deps.inbox.list({ ...query, limit: EXPORT_PAGE_SIZE, ...(after && { after }) }));
        yield* page;
        after = page.at(-1)?.inquiry;
        if (page.length < EXPORT_PAGE_SIZE) return;
      }
    },

    /** Each configured channel's delivery health (src/delivery/health.ts). */
    health: (): Promise<ChannelHealth[]> => deliveryHealth(deps.store.outbox, deps.channels, now()),

    /** Inquiries per UTC day of the last OVERVIEW_DAYS days (today included), by source. */
    async perDay(): Promise<{ days: readonly string[]; counts: readonly DailyCount[] }> {
      const today = Math.floor(now().getTime() / DAY_MS);
      const first = today - OVERVIEW_DAYS + 1;
      const days = Array.from({ length: OVERVIEW_DAYS }, (_, i) => new Date((first + i) * DAY_MS).toISOString().slice(0, 10));
      return { days, counts: await deps.inbox.countPerDay(new Date(first * DAY_MS)) };
    },
  };
}

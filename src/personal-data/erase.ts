// Erasing a person on request (GDPR art. 17; docs/operations.md, "Personal data"): everything held
// about them, in one transaction. A delivery of theirs being sent is waited for: erased under it, it
// would still go out; erased after it, nothing of theirs is sent any more.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSubject, ErasedData, PersonalData, PersonalDataStore, Scrub } from '../storage/personal-data-ports.js';
import type { DeliveryRecord } from '../storage/ports.js';

/** How often an erase waiting for deliveries being sent tries again. */
const IN_FLIGHT_POLL_MS = 250;

export interface EraseOptions {
  /** How long to wait for deliveries being sent: the delivery lease, within which a worker sends or lets go. */
  readonly waitMs: number;
  /** Told once, when the erase first has to wait. */
  readonly onWaiting?: (inFlight: readonly DeliveryRecord[]) => void;
  readonly now?: () => Date;
  readonly pollMs?: number;
}

/** Erased, with what became of the files; or nothing erased, the deliveries still being sent after the wait. */
export type EraseOutcome = { readonly erased: ErasedData; readonly scrub: Scrub } | { readonly inFlight: readonly DeliveryRecord[] };

export async function erasePerson(store: PersonalDataStore, subject: DataSubject, options: EraseOptions): Promise<EraseOutcome> {
  const now = options.now ?? (() => new Date());
  const deadline = now().getTime() + options.waitMs;
  for (let waiting = false; ; waiting = true) {
    const erasure = await store.erase(subject, now());
    if ('erased' in erasure) return { erased: erasure.erased, scrub: await store.scrub() };
    if (now().getTime() >= deadline) return { inFlight: erasure.inFlight };
    if (!waiting) options.onWaiting?.(erasure.inFlight);
    await sleep(options.pollMs ?? IN_FLIGHT_POLL_MS);
  }
}

/** What an erase of this data would delete, counted as an erase counts what it deleted. */
export function erasable(data: PersonalData): ErasedData {
  const deliveries = [...data.inquiries, ...data.serviceMails].flatMap((held) => held.deliveries);
  return {
    inquiries: data.inquiries.map(({ reference, receivedAt }) => ({ reference, receivedAt })),
    deliveries: deliveries.length,
    attempts: deliveries.reduce((count, delivery) => count + delivery.history.length, 0),
    idempotencyKeys: data.inquiries.reduce((count, inquiry) => count + inquiry.idempotencyKeys.length, 0),
    agentRegistrations: data.agentRegistrations.map((client) => client.clientId),
    agentClaims: data.agentClaims.length,
    serviceMails: data.serviceMails.length,
    codesMailed: data.codesMailed.length,
    signIns: data.signIns.length,
    refreshTokens: data.refreshTokens.length,
  };
}

// Moving an inquiry between the inbox and the quarantine (docs/spam.md): the CLI's release and spam
// and the inbox's spam / not spam. A release queues a delivery per channel the inquiry has none on;
// the worker sends them.
import type { InquiryRecord, InquiryVerdict, Store } from '../storage/ports.js';

export type MoveOutcome =
  | { readonly kind: 'missing' }
  /** It has that verdict already: nothing changed. */
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'moved'; readonly inquiry: InquiryRecord };

export async function moveInquiry(
  store: Pick<Store, 'inquiries'>,
  reference: string,
  verdict: InquiryVerdict,
  channels: readonly string[],
  now: Date,
): Promise<MoveOutcome> {
  const inquiry = await store.inquiries.findByReference(reference);
  if (!inquiry) return { kind: 'missing' };
  if (!(await store.inquiries.setVerdict(reference, verdict, channels, now))) return { kind: 'unchanged' };
  return { kind: 'moved', inquiry };
}

/** The delivery channels the server configures from the same settings (src/services.ts). */
export function configuredChannels(config: { readonly smtp: unknown; readonly webhook: unknown }): string[] {
  return [...(config.smtp ? ['email'] : []), ...(config.webhook ? ['webhook'] : [])];
}

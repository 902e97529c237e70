// Whom an erase or an export is about: an address as the studio types it, checked by the rule every
// address the service keeps was checked by, or the sender of an inquiry.
import { canonicalRecipient } from '../auth/recipient.js';
import { inquirySchema } from '../inquiries/schema.js';
import type { DataSubject, PersonalDataStore } from '../storage/personal-data-ports.js';
import { ajv } from '../validation/ajv.js';

const isAddress = ajv.compile<string>(inquirySchema.properties.email);

/** The person an address names (spaces around it ignored), or why it names nobody. */
export function dataSubject(address: string): DataSubject | { readonly problem: string } {
  const trimmed = address.trim();
  if (trimmed === '') return { problem: 'missing the email address' };
  if (!isAddress(trimmed)) return { problem: `"${address}" is not an email address such as ada@example.com` };
  // The rule admits ASCII only, which both databases' lower() fold as toLowerCase does.
  return { email: trimmed.toLowerCase(), recipient: canonicalRecipient(trimmed) };
}

/**
 * The sender of an inquiry: a request about one inquiry is about the person who wrote it, and all
 * they wrote from that address. Undefined when there is no such inquiry.
 */
export async function senderOf(store: PersonalDataStore, reference: string): Promise<DataSubject | undefined> {
  const address = await store.addressOf(reference);
  if (address === undefined) return undefined;
  return { email: address.toLowerCase(), recipient: canonicalRecipient(address) };
}

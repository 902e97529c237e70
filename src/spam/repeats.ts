// The same message from several addresses (repeated_message): a body's hash, kept with each
// inquiry, and the count of other senders within the window. docs/spam.md has the rule.
import { createHash } from 'node:crypto';

/** Senders of the same body are counted over this window. */
export const REPEAT_WINDOW_MS = 60 * 60 * 1000;
/** Bodies shorter than this ("Hello", "Test") are common enough that two people send them. */
export const REPEAT_MIN_LENGTH = 40;
/** The rule's points stop growing at 3 other addresses: a lookup needs no more than the sender and 3 others. */
export const REPEAT_SENDERS_COUNTED = 4;

/** NFKC-folded, lower case, whitespace collapsed: a copy pasted with other line breaks is the same body. */
function canonicalBody(message: string): string {
  return message.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** SHA-256 of the canonical body, or null for one too short to count as a repeat. */
export function bodyHashOf(message: string): string | null {
  const body = canonicalBody(message);
  if ([...body].length < REPEAT_MIN_LENGTH) return null;
  return createHash('sha256').update(body).digest('hex');
}

/** A sender's address as the count compares them: case does not make another sender. */
export const senderOf = (email: string): string => email.trim().toLowerCase();

/** How many addresses other than `sender` are among `senders` (each counted once). */
export function otherSenders(senders: Iterable<string>, sender: string): number {
  const others = new Set(senders);
  others.delete(senderOf(sender));
  return others.size;
}

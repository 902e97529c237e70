// Claim codes never stored in clear: a code's mail is queued with a placeholder naming a random
// nonce, and the code (an HMAC of the nonce under a key shared by every instance) is put in its
// place only as the mail is sent. The database and its log hold the nonce and the code's hash only.
import { createHmac, randomBytes } from 'node:crypto';

const PLACEHOLDER = /\{\{claim-code:([A-Za-z0-9_-]{24})\}\}/g;

/** A fresh nonce, and the placeholder that stands for its code in a queued mail. */
export function codePlaceholder(): { nonce: string; placeholder: string } {
  const nonce = randomBytes(18).toString('base64url');
  return { nonce, placeholder: `{{claim-code:${nonce}}}` };
}

/** The `digits`-digit code of a nonce under `key` (48 bits of HMAC-SHA-256, reduced: no bias worth the name). */
export function codeFor(key: string, nonce: string, digits: number): string {
  const value = createHmac('sha256', key).update(nonce).digest().readUIntBE(0, 6);
  return String(value % 10 ** digits).padStart(digits, '0');
}

/** A queued mail's text with each placeholder replaced by its code: what is sent. */
export function withCodes(text: string, key: string, digits: number): string {
  return text.replace(PLACEHOLDER, (_placeholder, nonce: string) => codeFor(key, nonce, digits));
}

// Sign-in links never written to the database in clear: the mail is queued with a placeholder
// naming a random nonce, and the link's token (an HMAC of the nonce under a key every instance
// shares) is put in its place as the mail is sent; the database holds the token's SHA-256 only.
import { createHash, createHmac, randomBytes } from 'node:crypto';

const PLACEHOLDER = /\{\{inbox-link:([A-Za-z0-9_-]{24})\}\}/g;

export function linkPlaceholder(): { nonce: string; placeholder: string } {
  const nonce = randomBytes(18).toString('base64url');
  return { nonce, placeholder: `{{inbox-link:${nonce}}}` };
}

/** The token of a nonce under `key`: 256 bits, URL-safe. */
export function linkToken(key: string, nonce: string): string {
  return createHmac('sha256', key).update(`inbox-link:${nonce}`).digest('base64url');
}

/** A queued mail's text with each placeholder replaced by its token: what is sent. */
export function withLinkTokens(text: string, key: string): string {
  return text.replace(PLACEHOLDER, (_placeholder, nonce: string) => linkToken(key, nonce));
}

/** What is stored of a secret (a link's token, a session's id): its SHA-256, hex. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A fresh random secret: 256 bits, URL-safe. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

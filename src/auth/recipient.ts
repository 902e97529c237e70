// The mailbox an address reaches, as the limits on mailed codes count it (docs/agent-auth.md): the
// spellings one person's provider delivers to one inbox are one recipient, so none is a way round them.

/** Providers that ignore dots in the local part, under the domain they deliver as. */
const DOTLESS_PROVIDERS: ReadonlyMap<string, string> = new Map([
  ['gmail.com', 'gmail.com'],
  ['googlemail.com', 'gmail.com'],
]);

/**
 * `Owner@Example.com ` and `owner@example.com` are one recipient, and so are `owner+1@…` and
 * `owner+2@…` (a "+" tag, RFC 5233 subaddressing, reaches the same mailbox at the common providers),
 * and at Gmail `J.Doe@googlemail.com` and `jdoe@gmail.com`. Idempotent; never throws.
 */
export function canonicalRecipient(email: string): string {
  const address = email.toLowerCase().trim();
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const written = address.slice(at + 1);
  const provider = DOTLESS_PROVIDERS.get(written);
  let local = address.slice(0, at).replace(/\+.*$/s, '');
  if (provider !== undefined) local = local.replaceAll('.', '');
  // Removing dots may bare leading spaces: trimmed, or the next call would trim them.
  return `${local.trimStart()}@${provider ?? written}`;
}

/** The domain of a canonical recipient (after its last "@"), which the limits per domain count by. */
export const domainOf = (recipient: string): string => recipient.slice(recipient.lastIndexOf('@') + 1);

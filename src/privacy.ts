// Personal data kept out of logs and stored errors: an address is shown as its first letter and
// its domain ("a***@example.com"), which is enough to tell a studio's own address from another.

/** An address: its local part's characters (RFC 5322 atext and dots), "@", a dotted domain. */
const EMAIL_ADDRESS = /([\p{L}\p{N}!#$%&'*+/=?^_`{|}~-])[\p{L}\p{N}!#$%&'*+/=?^_`{|}~.-]*@([\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)/gu;

/** The text with every email address in it masked. */
export function maskEmailAddresses(text: string): string {
  return text.replace(EMAIL_ADDRESS, '$1***@$2');
}

/** A copy of a log record (any JSON-like value) with every address in its strings masked. */
export function maskDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskEmailAddresses(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, depth + 1));
  // Plain records only: an Error, a Date or a Buffer is left to its serializer.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskDeep(item, depth + 1)]));
}

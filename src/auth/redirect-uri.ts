// Which redirect URIs a client may register, and when a requested one matches (RFC 6749 §3.1.2,
// RFC 9700 §2.1: exact match; RFC 8252 §7.3 and §8.3: loopback http, on any port).

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why `uri` cannot be registered, or null: https, or http to a loopback host; no fragment. */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return `${uri} is not an absolute URI`;
  const url = new URL(uri);
  if (url.hash !== '' || uri.includes('#')) return `${uri} has a fragment, which a redirect URI must not have`;
  if (url.username !== '' || url.password !== '') return `${uri} carries credentials`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `${uri} must be https, or http to a loopback address (127.0.0.1, [::1], localhost)`;
}

/**
 * Whether the redirect URI of a request is one registered: the same string, or for a loopback http
 * URI the same but for its port (native apps listen on whatever port is free, RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (!URL.canParse(requested)) return false;
  const asked = new URL(requested);
  if (asked.protocol !== 'http:' || !LOOPBACK_HOSTS.has(asked.hostname)) return false;
  const withoutPort = (url: URL) => `${url.protocol}//${url.hostname}${url.pathname}${url.search}`;
  return registered.some(
    (uri) => URL.canParse(uri) && withoutPort(new URL(uri)) === withoutPort(asked) && new URL(uri).protocol === 'http:',
  );
}

// Escaping for the server-rendered contact page. Every value that comes from configuration (the
// studio profile, PUBLIC_URL) passes through one of these before it reaches the HTML.

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** A link target only when it is an absolute http(s) URL; anything else (javascript:, data:, …) is null. */
export function safeHttpUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A mailto: URL whose address cannot smuggle in headers (RFC 6068: "?" and "&" are percent-encoded). */
export function mailtoUrl(address: string): string {
  return `mailto:${encodeURIComponent(address).replace(/%40/g, '@')}`;
}

/** Profile texts are single-line in the page's headings and the plain-text files: whitespace runs become one space. */
export function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

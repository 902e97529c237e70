// Text that goes into a mail: kept to one line for a header or a labelled line, escaped for HTML.

/**
 * Control characters (C0, DEL, C1: NEL U+0085 is a line break to Unicode), the line and paragraph
 * separators, and the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
 * would turn the rest of a subject around.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

/** Invisible and format characters (zero-width spaces and joiners, soft hyphens, Hangul fillers): they hide or split words. */
const INVISIBLE_CHARACTERS = /[\p{Cf}\u115f\u1160\u3164\uffa0]+/gu;

/** Collapses line breaks and other control characters, so a value stays on its header line, and drops invisible ones. */
export function headerSafe(value: string): string {
  return value.replace(CONTROL_CHARACTERS, ' ').replace(INVISIBLE_CHARACTERS, '').replace(/\s+/g, ' ').trim();
}

/**
 * headerSafe, and no RFC 2047 encoded-word: mail clients would show "=?UTF-8?B?…?=" decoded, even in
 * quoted names (a forged "CEO <ceo@…>"). A zero-width space after each "=" of "=?" leaves nothing to
 * decode, so the name is shown as typed (nodemailer encodes the whole name, as any non-ASCII one).
 */
export function headerText(value: string): string {
  return headerSafe(value).replaceAll('=?', '=\u200b?');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

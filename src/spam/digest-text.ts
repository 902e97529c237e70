// The quarantine digest's words (docs/spam.md, docs/delivery.md): the plain-text mail and the webhook
// event, built from what a digest took. Pure: no store, no clock.
import type { DigestContents, QuarantinedInquiry } from '../storage/ports.js';

/** How much of a message a digest shows, in characters: enough to tell a brief from a pitch. */
export const EXCERPT_LENGTH = 200;
/** The inquiries a digest lists; the rest are counted (a flood would make a mail nobody reads). */
export const DIGEST_LISTED_MAX = 100;
/** The webhook event that carries the digest where no mail is configured. */
export const DIGEST_EVENT_TYPE = 'inquiry.quarantine_digest';

/** The command that moves an inquiry to the inbox and delivers it (docs/operations.md). */
export const releaseCommand = (reference: string): string => `studio-inquiry release ${reference}`;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The first `length` characters (code points) of `text`, with "…" when there is more. It ends
 * between two characters as shown (grapheme clusters: never half an emoji, an accent or a surrogate
 * pair), unless its first one alone is longer than that.
 */
export function excerpt(text: string, length = EXCERPT_LENGTH): string {
  let points = 0;
  let end = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    points += [...segment].length;
    if (points > length) {
      const cut = end > 0 ? end : [...text].slice(0, length).join('').length;
      return `${text.slice(0, cut)}…`;
    }
    end = index + segment.length;
  }
  return text;
}

/**
 * Control characters (C0, DEL, C1; NEL is a line break to Unicode), the line and paragraph
 * separators, and the bidi embeddings, overrides and isolates that would turn the rest of a line around.
 */
const UNSAFE_IN_A_LINE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu;

/** The text on one line of the mail: nothing in a name can start a line of its own (a forged "Release:"). */
export const mailLine = (text: string): string => text.replace(UNSAFE_IN_A_LINE, ' ').replace(/\s+/g, ' ').trim();

const inquiries = (count: number): string => (count === 1 ? '1 inquiry' : `${count} inquiries`);

/** The subject and plain-text body of the digest mail. */
export function digestMail(contents: DigestContents): { subject: string; body: string } {
  const { since, total, listed } = contents;
  const window = since === null ? 'since digests began' : `since the last digest (${since.toISOString()})`;
  // One line per paragraph: mail clients wrap it to their width.
  const intro =
    `${inquiries(total)} went to the quarantine ${window}. Each was stored and answered as usual, but not delivered. ` +
    'If one is a real inquiry, release it with the command under it: its email and webhook are then sent as for any other.\n';
  const more = total - listed.length;
  const rest = more > 0 ? `\n${inquiries(more)} more, with higher scores: studio-inquiry list --spam\n` : '';
  return {
    subject: `Quarantine digest: ${inquiries(total)} held as spam`,
    body: `${intro}\n${listed.map((entry, i) => mailEntry(entry, i + 1)).join('\n')}${rest}`,
  };
}

function mailEntry({ inquiry, judgement, quarantinedAt }: QuarantinedInquiry, number: number): string {
  const company = inquiry.company === null ? '' : `, ${mailLine(inquiry.company)}`;
  const moved = quarantinedAt.getTime() === inquiry.receivedAt.getTime() ? '' : ` · moved to the quarantine ${quarantinedAt.toISOString()}`;
  const reasons = judgement.reasons.map(({ code, detail }) => `${code} (${mailLine(detail)})`).join(', ') || 'none (moved by hand)';
  return [
    `${number}. ${mailLine(`${inquiry.firstName} ${inquiry.lastName}`)} <${mailLine(inquiry.email)}>${company}`,
    `   ${inquiry.reference} · received ${inquiry.receivedAt.toISOString()}${moved} · score ${judgement.score}`,
    `   Reasons: ${reasons}`,
    `   "${mailLine(excerpt(inquiry.message))}"`,
    `   Release: ${releaseCommand(inquiry.reference)}`,
    '',
  ].join('\n');
}

/**
 * The webhook event's body. `timestamp` is when the digest was taken (the event), so every attempt
 * sends the same body; the excerpts keep their lines, JSON escapes the rest.
 */
export function digestEvent(contents: DigestContents, takenAt: Date) {
  return {
    type: DIGEST_EVENT_TYPE,
    timestamp: takenAt.toISOString(),
    data: {
      since: contents.since?.toISOString() ?? null,
      total: contents.total,
      inquiries: contents.listed.map(({ inquiry, judgement, quarantinedAt }) => ({
        reference: inquiry.reference,
        firstName: inquiry.firstName,
        lastName: inquiry.lastName,
        email: inquiry.email,
        company: inquiry.company,
        excerpt: excerpt(inquiry.message),
        receivedAt: inquiry.receivedAt.toISOString(),
        quarantinedAt: quarantinedAt.toISOString(),
        score: judgement.score,
        reasons: judgement.reasons,
        release: releaseCommand(inquiry.reference),
      })),
    },
  };
}

// The notification mail's words, in its text and HTML parts alike (docs/delivery.md, "Email"): the
// person, company and message first, then when (in the studio's time zone), where it came from, the
// reference, a reply link and the inquiry in the inbox. Pure: every field escaped or kept to one line.
import { personVerified } from '../auth/agent-identity.js';
import { SOURCE_NAMES } from '../inquiries/source.js';
import type { AgentClient, InquiryRecord } from '../storage/ports.js';
import { studioTime } from '../studio/time.js';
import { escapeHtml, headerSafe } from './mail-text.js';

/** The agent that sent an inquiry, as the mail names it. */
export interface AgentLabel {
  readonly name: string;
  /** Its registration was claimed by a person (or made with their identity provider's assertion). */
  readonly verified: boolean;
}

export interface InquiryMailContext {
  /** STUDIO_TIMEZONE. */
  readonly timeZone: string;
  /** PUBLIC_URL, on which the inbox link is built. */
  readonly publicUrl: string;
  /** The submitting agent as registered, or null (none, or not found: its client id is shown). */
  readonly agent: AgentLabel | null;
}

/** An agent's name and whether a person stands behind it: an active registration with a verified address. */
export function agentLabel(client: AgentClient | undefined): AgentLabel | null {
  if (client === undefined) return null;
  return { name: client.clientName, verified: personVerified(client) };
}

/** A mailto: URL for an address: "?", "&" and the like percent-encoded, so it cannot add a header (RFC 6068). */
const mailto = (address: string): string => `mailto:${encodeURIComponent(address).replaceAll('%40', '@')}`;

/** A `mailto:` to the person with the reference in the subject (RFC 6068: the address and subject percent-encoded). */
export function replyLink(inquiry: Pick<InquiryRecord, 'email' | 'reference'>): string {
  return `${mailto(inquiry.email)}?subject=${encodeURIComponent(`Re: your inquiry ${inquiry.reference}`)}`;
}

/** The inquiry in the studio's inbox. */
export const inboxLink = (publicUrl: string, reference: string): string => `${publicUrl}/inbox/inquiries/${encodeURIComponent(reference)}`;

/** Where it came from, in words: the door, and the agent with whether its person is verified. */
export function sourceText(inquiry: Pick<InquiryRecord, 'source' | 'clientId'>, agent: AgentLabel | null): string {
  const door = inquiry.source === null ? null : SOURCE_NAMES[inquiry.source];
  if (inquiry.clientId === null) return door ?? 'not recorded';
  const who =
    agent === null
      ? `an agent (client ${headerSafe(inquiry.clientId)})`
      : `the agent “${headerSafe(agent.name)}”, ${agent.verified ? 'its person verified' : 'its person not verified'}`;
  return door === null ? `sent by ${who}` : `${door}, sent by ${who}`;
}

interface MailFacts {
  readonly name: string;
  readonly firstName: string;
  readonly company: string | null;
  readonly received: string;
  readonly source: string;
  readonly reply: string;
  readonly inbox: string;
}

function factsOf(inquiry: InquiryRecord, context: InquiryMailContext): MailFacts {
  const firstName = headerSafe(inquiry.firstName);
  return {
    name: headerSafe(`${inquiry.firstName} ${inquiry.lastName}`),
    firstName: firstName === '' ? 'them' : firstName,
    company: inquiry.company === null || headerSafe(inquiry.company) === '' ? null : headerSafe(inquiry.company),
    received: studioTime(inquiry.receivedAt, context.timeZone),
    source: sourceText(inquiry, context.agent),
    reply: replyLink(inquiry),
    inbox: inboxLink(context.publicUrl, inquiry.reference),
  };
}

/** The plain-text part: one labelled line per field (none can start a line of its own); the message keeps its lines. */
export function inquiryMailText(inquiry: InquiryRecord, context: InquiryMailContext): string {
  const facts = factsOf(inquiry, context);
  return [
    `Name: ${facts.name}`,
    ...(facts.company === null ? [] : [`Company: ${facts.company}`]),
    `Email: ${inquiry.email}`,
    '',
    'Message:',
    '',
    inquiry.message,
    '',
    `Received: ${facts.received}`,
    `Came through: ${facts.source}`,
    `Reference: ${inquiry.reference}`,
    '',
    `Reply to ${facts.firstName}: ${facts.reply}`,
    `Open in the inbox: ${facts.inbox}`,
    '',
  ].join('\n');
}

const FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
/** Light colours inline; dark ones from the media query where the client honours it. Each pair holds at least 4.5:1. */
const DARK_MODE = `@media (prefers-color-scheme: dark) {
  .page { background: #18181b !important; }
  .card { background: #27272a !important; border-color: #3f3f46 !important; }
  .text { color: #f4f4f5 !important; }
  .muted { color: #d4d4d8 !important; }
  .link { color: #93c5fd !important; }
  .button { background: #93c5fd !important; color: #18181b !important; }
  .rule { border-color: #3f3f46 !important; }
}`;

const text = (size: number) => `font-family:${FONT};font-size:${size}px;line-height:1.5;color:#18181b;`;
const muted = `font-family:${FONT};font-size:13px;line-height:1.5;color:#52525b;`;

function detailRow(label: string, value: string): string {
  return (
    `<tr><th align="left" valign="top" class="muted" style="${muted}font-weight:normal;padding:4px 16px 4px 0;white-space:nowrap;">${escapeHtml(label)}</th>` +
    `<td class="text" style="${text(14)}padding:4px 0;">${escapeHtml(value)}</td></tr>`
  );
}

/** The HTML part: one centred table, inline styles, no images; the message escaped, its line breaks kept. */
export function inquiryMailHtml(inquiry: InquiryRecord, context: InquiryMailContext): string {
  const facts = factsOf(inquiry, context);
  const message = escapeHtml(inquiry.message).replace(/\r\n|\r|\n/g, '<br>');
  const company = facts.company === null ? '' : `<p class="text" style="${text(15)}margin:2px 0 0;">${escapeHtml(facts.company)}</p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="supported-color-schemes" content="light dark">
<title>${escapeHtml(`New inquiry from ${facts.name}`)}</title><style>${DARK_MODE}</style></head>
<body class="page" style="margin:0;padding:0;background:#f4f4f5;">
<table role="presentation" class="page" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f4f4f5;"><tr><td align="center" style="padding:24px 12px;">
<table role="presentation" class="card" width="600" cellpadding="0" cellspacing="0" border="0" style="width:100%;max-width:600px;background:#ffffff;border:1px solid #e4e4e7;border-radius:8px;">
<tr><td style="padding:24px 28px 0;">
<p class="muted" style="${muted}margin:0 0 6px;">New inquiry · ${escapeHtml(inquiry.reference)}</p>
<h1 class="text" style="${text(22)}margin:0;font-weight:600;line-height:1.3;">${escapeHtml(facts.name)}</h1>
${company}<p style="${text(15)}margin:2px 0 0;"><a class="link" href="${escapeHtml(mailto(inquiry.email))}" style="color:#1d4ed8;">${escapeHtml(inquiry.email)}</a></p>
</td></tr>
<tr><td class="text" style="${text(16)}padding:20px 28px;white-space:pre-wrap;">${message}</td></tr>
<tr><td style="padding:0 28px 24px;">
<a class="button" href="${escapeHtml(facts.reply)}" style="font-family:${FONT};font-size:15px;font-weight:600;display:inline-block;background:#1d4ed8;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;">Reply to ${escapeHtml(facts.firstName)}</a>
<a class="link" href="${escapeHtml(facts.inbox)}" style="font-family:${FONT};font-size:15px;color:#1d4ed8;margin-left:16px;">Open in the inbox</a>
</td></tr>
<tr><td class="rule" style="padding:16px 28px 24px;border-top:1px solid #e4e4e7;">
<table role="presentation" cellpadding="0" cellspacing="0" border="0">
${detailRow('Received', facts.received)}
${detailRow('Came through', facts.source)}
${detailRow('Reference', inquiry.reference)}
</table>
</td></tr>
</table>
<p class="muted" style="${muted}margin:16px 0 0;">Replying to this mail reaches ${escapeHtml(facts.name)} directly.</p>
</td></tr></table>
</body></html>
`;
}

// Email to the studio's inbox through nodemailer over SMTP_URL (docs/delivery.md).
// From is always the service (DMARC), Reply-To is the person; no field can add or change a header.
import nodemailer, { type Transporter } from 'nodemailer';
import type { AgentClient, DeliveryRecord, InquiryRecord, Outgoing, ServiceMessage } from '../storage/ports.js';
import type { StudioProfile } from '../studio/profile.js';
import type { Channel, SendResult } from './channel.js';
import { agentLabel, type InquiryMailContext, inquiryMailHtml, inquiryMailText } from './inquiry-mail.js';
import { headerText } from './mail-text.js';

export { escapeHtml, headerSafe, headerText } from './mail-text.js';

/** From: `Name <address>` as one string, or as an object whose name nodemailer quotes and encodes itself. */
export type MailSender = string | { readonly name: string; readonly address: string };

export interface EmailChannelOptions {
  readonly smtpUrl: string;
  readonly from: MailSender;
  readonly to: string;
  readonly profile: StudioProfile;
  /** How long one send may take as a whole (SEND_DEADLINE_MS; tests shorten it). */
  readonly sendDeadlineMs?: number;
  /** STUDIO_TIMEZONE, the zone the mail's times are in (UTC by default). */
  readonly timeZone?: string;
  /** PUBLIC_URL, on which the link to the inbox is built. */
  readonly publicUrl?: string;
  /** The registration of an inquiry's agent, to name it (its client id is shown where there is none). */
  readonly findAgent?: (clientId: string) => Promise<AgentClient | undefined>;
}

/**
 * Transport settings, added to SMTP_URL's query unless the operator set them there: a small pool of
 * reused connections, and timeouts for a server that does not answer.
 */
const TRANSPORT_DEFAULTS: Record<string, string> = {
  pool: 'true',
  maxConnections: '4',
  // nodemailer's default reconnects every 100 messages; a long-lived connection costs less processor a mail.
  maxMessages: 'Infinity',
  connectionTimeout: '10000',
  greetingTimeout: '10000',
  // Silence this long fails the attempt, retried: after the data, a second copy. So it outlasts the content
  // checks servers run before their reply (RFC 5321 §4.5.3.2.6 allows that reply 10 minutes).
  socketTimeout: '120000',
};

/**
 * A send as a whole: a server that keeps its connection busy without ever finishing (continuation
 * lines, a trickle) is never silent for the socket timeout. Past this the send is aborted, which
 * closes its connection only (the pool's other sends go on), and the attempt fails, to be retried.
 */
export const SEND_DEADLINE_MS = 10 * 60_000;

/**
 * One Message-ID per delivery, the same on every attempt: delivery is at least once, and a mail sent
 * again after a crash (between sending and recording) is then the same message to the mail system,
 * which clients and mailbox providers show once. Its domain is MAIL_FROM's (RFC 5322 §3.6.4).
 */
export function messageIdOf(delivery: Pick<DeliveryRecord, 'id'>, from: MailSender): string {
  const address = typeof from === 'string' ? from : from.address;
  const domain = /@([^>\s]+)>?\s*$/.exec(address)?.[1] ?? 'studio-inquiry.invalid';
  return `<${delivery.id}@${domain}>`;
}

export function withTransportDefaults(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  for (const [name, value] of Object.entries(TRANSPORT_DEFAULTS)) {
    if (!url.searchParams.has(name)) url.searchParams.set(name, value);
  }
  // A password over smtp: goes out only after STARTTLS: a server that does not offer it (or a
  // man in the middle that strips the offer) gets no password in clear text, and the attempt fails
  // (retried) saying so, unless the URL chooses otherwise (requireTLS=false, ignoreTLS, …).
  const tlsChosen = ['requireTLS', 'ignoreTLS', 'opportunisticTLS', 'secure'].some((name) => url.searchParams.has(name));
  if (url.protocol === 'smtp:' && url.password !== '' && !tlsChosen) url.searchParams.set('requireTLS', 'true');
  return url.href;
}

/** The mail about one inquiry (its words: inquiry-mail.ts). */
export function composeInquiryEmail(
  inquiry: InquiryRecord,
  options: Pick<EmailChannelOptions, 'from' | 'to'> & Partial<InquiryMailContext>,
) {
  const name = headerText(`${inquiry.firstName} ${inquiry.lastName}`);
  const company = inquiry.company === null ? '' : headerText(inquiry.company);
  const context: InquiryMailContext = {
    timeZone: options.timeZone ?? 'UTC',
    publicUrl: options.publicUrl ?? 'http://localhost:3000',
    agent: options.agent ?? null,
  };
  return {
    from: options.from,
    to: options.to,
    // An address object: nodemailer quotes and encodes the display name itself.
    replyTo: { name, address: inquiry.email },
    subject: `New inquiry from ${name}${company ? ` (${company})` : ''} — ${inquiry.reference}`,
    text: inquiryMailText(inquiry, context),
    html: inquiryMailHtml(inquiry, context),
    headers: { 'X-Inquiry-Reference': inquiry.reference },
    date: inquiry.receivedAt,
  };
}

/** Mail from the service to a person (a claim code): plain text, no field from anyone else. */
export function composeServiceEmail(message: ServiceMessage, options: Pick<EmailChannelOptions, 'from'>) {
  return { from: options.from, to: message.to, subject: headerText(message.subject), text: message.body };
}

export function createEmailChannel(options: EmailChannelOptions): Channel {
  const transportUrl = new URL(withTransportDefaults(options.smtpUrl));
  const transport: Transporter = nodemailer.createTransport(transportUrl.href);
  // Pooled, nodemailer sends on this many connections and queues the rest out of the worker's sight.
  const connections = Number(transportUrl.searchParams.get('maxConnections'));
  const pooled = transportUrl.searchParams.get('pool') === 'true' && Number.isInteger(connections) && connections > 0;
  const deadlineMs = options.sendDeadlineMs ?? SEND_DEADLINE_MS;
  /** The agent's name for the mail; a registration that cannot be read now leaves its client id shown, not the mail unsent. */
  const agentOf = async ({ clientId }: InquiryRecord) =>
    clientId === null || options.findAgent === undefined ? null : agentLabel(await options.findAgent(clientId).catch(() => undefined));

  return {
    name: 'email',
    ...(pooled && { concurrency: connections }),
    async send(delivery: DeliveryRecord, payload: Outgoing): Promise<SendResult> {
      const mail =
        payload.kind === 'inquiry'
          ? composeInquiryEmail(payload.inquiry, { ...options, agent: await agentOf(payload.inquiry) })
          : composeServiceEmail(payload.message, options);
      try {
        const signal = AbortSignal.timeout(deadlineMs);
        await transport.sendMail({ ...mail, messageId: messageIdOf(delivery, options.from), signal });
        return { outcome: 'succeeded' };
      } catch (error) {
        if ((error as { code?: unknown }).code === 'EABORT') {
          const detail = `the mail server did not finish the send within ${deadlineMs / 1000} s; its connection was closed`;
          return { outcome: 'retry', error: detail };
        }
        return classifySmtpError(error);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * RFC 5321 §4.2.1: 5yz is permanent, 4yz transient. A 5yz to MAIL, RCPT or DATA ends the delivery; all
 * else is retried, and so are 5yz an operator can fix: 530, 538 (RFC 4954 §6, RFC 3207: authentication,
 * STARTTLS), and the RFC 3463 codes X.7.x (security or policy) and X.2.2 (mailbox full: persistent transient).
 */
export function classifySmtpError(error: unknown): SendResult {
  const { responseCode, command, message, response } = (error ?? {}) as {
    responseCode?: number;
    command?: string;
    message?: string;
    response?: string;
  };
  const detail = `SMTP${command ? ` ${command}` : ''}: ${message ?? String(error)}`;
  const refused = typeof responseCode === 'number' && responseCode >= 500 && /^(MAIL|RCPT|DATA)/i.test(command ?? '');
  return refused && !operatorCanFix(responseCode, response) ? { outcome: 'failed', error: detail } : { outcome: 'retry', error: detail };
}

function operatorCanFix(code: number, response = ''): boolean {
  if (code === 530 || code === 538) return true;
  const enhanced = /^\d{3}[ -]5\.(\d{1,3})\.(\d{1,3})\b/.exec(response);
  return enhanced !== null && (enhanced[1] === '7' || (enhanced[1] === '2' && enhanced[2] === '2'));
}

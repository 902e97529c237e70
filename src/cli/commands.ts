// The CLI's commands. Each one first checks its arguments (throwing UsageError, before the database
// is opened, so a typo costs nothing) and returns the work to run against the open store, which
// resolves to the process exit code.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { agentIdentities } from '../auth/agent-identity.js';
import type { Config } from '../config.js';
import { CSV_HEADER, csvRecord, csvValues, deliverySummary } from '../inquiries/export-format.js';
import { normaliseReference, REFERENCE_PATTERN } from '../inquiries/reference.js';
import { SOURCE_NAMES } from '../inquiries/source.js';
import type { PersonalDataStore } from '../storage/personal-data-ports.js';
import type { DeliveryRecord, InquiryJudgement, InquiryRecord, Store } from '../storage/ports.js';
import type { InboxStore } from '../storage/ports-inbox.js';
import { iso, lastErrors, parseInstant, printable, printableLine, table } from './format.js';

/** parseArgs' values; no option here is `multiple`, so arrays do not occur. */
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
/** A command's work on the open inbox: its store, the part that finds one person's data, and the inbox's sign-in and listing. */
export type Work = (store: Store, config: Config, personalData: PersonalDataStore, inbox: InboxStore) => Promise<number>;

/** Wrong arguments: the message is printed with a pointer to the usage text, exit code 2. */
export class UsageError extends Error {}

const DEFAULT_LIST_LIMIT = 50;
/**
 * `list` reads the deliveries of its inquiries with one IN-list of their references, and SQLite
 * takes at most 32,766 parameters in a statement; `export` reads any number, a page at a time.
 */
export const LIST_LIMIT_MAX = 10_000;
const EXPORT_PAGE_SIZE = 500;

const out = (text: string) => process.stdout.write(text);
const fail = (message: string): number => {
  process.stderr.write(`studio-inquiry: ${message}\n`);
  return 1;
};

function parseSince(value: Values[string]): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const date = parseInstant(value);
  if (date === undefined) {
    throw new UsageError(`--since "${value}" is not a real ISO date such as 2025-01-31 or 2025-01-31T09:00:00Z (no zone means UTC)`);
  }
  return date;
}

function parseLimit(value: Values[string]): number {
  if (typeof value !== 'string') return DEFAULT_LIST_LIMIT;
  // Compared as a number only once it is known to be digits; beyond 2^53 it is still far above the maximum.
  if (!/^[1-9]\d*$/.test(value) || Number(value) > LIST_LIMIT_MAX) {
    throw new UsageError(`--limit "${value}" is not a whole number from 1 to ${LIST_LIMIT_MAX} (export gives them all)`);
  }
  return Number(value);
}

function onlyReference(positionals: readonly string[], required: boolean): string | undefined {
  if (positionals.length > 1) throw new UsageError(`expected one reference, got: ${positionals.join(' ')}`);
  const [reference] = positionals;
  if (reference === undefined && required) throw new UsageError('missing the inquiry reference, e.g. INQ-7K2M9Q');
  if (reference === undefined) return undefined;
  const normalised = normaliseReference(reference);
  // No inquiry could have it: a mistyped argument, not a reference that was never given out.
  if (!REFERENCE_PATTERN.test(normalised)) throw new UsageError(`"${reference}" is not an inquiry reference such as INQ-7K2M9Q`);
  return normalised;
}

const INBOX: InquiryJudgement = { verdict: 'inbox', score: 0, reasons: [] };

/** An inquiry with its verdict and deliveries: the shape of `list --json` and `export --format json`. */
const withDeliveries = (
  inquiry: InquiryRecord,
  deliveries: readonly DeliveryRecord[],
  judgements: ReadonlyMap<string, InquiryJudgement>,
) => {
  const { verdict, score, reasons } = judgements.get(inquiry.reference) ?? INBOX;
  return {
    ...inquiry,
    verdict,
    spamScore: score,
    reasons,
    deliveries: deliveries.filter((delivery) => delivery.reference === inquiry.reference),
  };
};

/** The reason codes of a judgement, comma-separated ("-" for none). */
export const reasonCodes = ({ reasons }: Pick<InquiryJudgement, 'reasons'>): string =>
  reasons.length === 0 ? '-' : reasons.map(({ code }) => code).join(', ');

export function list(values: Values, positionals: readonly string[]): Work {
  if (positionals.length > 0) throw new UsageError(`list takes no reference (use show ${positionals[0]})`);
  const limit = parseLimit(values.limit);
  const since = parseSince(values.since);
  // The inbox, or with --spam the quarantine (docs/spam.md).
  const verdict = values.spam ? 'spam' : 'inbox';
  return async (store) => {
    const inquiries = await store.inquiries.list({ limit, verdict, ...(since && { since }) });
    const references = inquiries.map((inquiry) => inquiry.reference);
    const [deliveries, judgements] = await Promise.all([store.outbox.forReferences(references), store.inquiries.judgements(references)]);
    if (values.json) {
      out(
        `${JSON.stringify(
          inquiries.map((inquiry) => withDeliveries(inquiry, deliveries, judgements)),
          null,
          2,
        )}\n`,
      );
    } else if (inquiries.length === 0) {
      out(verdict === 'spam' ? 'No quarantined inquiries.\n' : 'No inquiries.\n');
    } else if (verdict === 'spam') {
      const rows = inquiries.map((inquiry) => {
        const judgement = judgements.get(inquiry.reference) ?? INBOX;
        const name = `${inquiry.firstName} ${inquiry.lastName}`;
        return [inquiry.reference, iso(inquiry.receivedAt), name, inquiry.email, String(judgement.score), reasonCodes(judgement)];
      });
      out(table(['REFERENCE', 'RECEIVED', 'NAME', 'EMAIL', 'SCORE', 'REASONS'], rows));
      out(`Release one to the inbox (and its deliveries) with: studio-inquiry release <reference>\n`);
    } else {
      const rows = inquiries.map((inquiry) => {
        const own = withDeliveries(inquiry, deliveries, judgements).deliveries;
        return [
          inquiry.reference,
          iso(inquiry.receivedAt),
          `${inquiry.firstName} ${inquiry.lastName}`,
          inquiry.email,
          inquiry.company ?? '-',
          deliverySummary(own),
          // Why a delivery is stuck, at a glance; shortened to the column, in full with `show`.
          lastErrors(own),
        ];
      });
      out(table(['REFERENCE', 'RECEIVED', 'NAME', 'EMAIL', 'COMPANY', 'DELIVERIES', 'LAST ERROR'], rows));
    }
    return 0;
  };
}

export function show(values: Values, positionals: readonly string[]): Work {
  const reference = onlyReference(positionals, true) as string;
  return async (store) => {
    const inquiry = await store.inquiries.findByReference(reference);
    if (!inquiry) return fail(`no inquiry ${reference}`);
    const { verdict, score, reasons, releasedAt } = (await store.inquiries.judgements([reference])).get(reference) ?? INBOX;
    const deliveries = await Promise.all(
      (await store.outbox.forReference(reference)).map(async (delivery) => ({
        ...delivery,
        history: await store.outbox.attempts(delivery.id),
      })),
    );
    const agent = await agentIdentities(store)(inquiry.clientId);
    if (values.json) {
      const shown = { ...inquiry, agent: agent && { name: agent.name, verifiedEmail: agent.verifiedEmail } };
      out(`${JSON.stringify({ ...shown, verdict, spamScore: score, reasons, releasedAt: releasedAt ?? null, deliveries }, null, 2)}\n`);
      return 0;
    }
    const field = (label: string, value: string | null) => `${label.padEnd(10)}${printableLine(value ?? '-')}\n`;
    // An error of several lines (an SMTP reply) goes on indented under its own line.
    const indentedError = (error: string, indent: string) => printable(error).replace(/\n/g, `\n${indent}`);
    out(
      field('Reference', inquiry.reference) +
        field('Received', iso(inquiry.receivedAt)) +
        field('Name', `${inquiry.firstName} ${inquiry.lastName}`) +
        field('Email', inquiry.email) +
        field('Company', inquiry.company) +
        field('Source', inquiry.source && SOURCE_NAMES[inquiry.source]) +
        field('Client ID', inquiry.clientId) +
        field('Agent', agent && (agent.verifiedEmail === null ? agent.name : `${agent.name}, for ${agent.verifiedEmail} (verified)`)) +
        field('Verdict', `${verdict} (score ${score})${releasedAt ? `, released from the quarantine at ${iso(releasedAt)}` : ''}`) +
        reasons.map(({ code, detail }) => `  ${printableLine(`${code}: ${detail}`)}\n`).join('') +
        `Message\n${printable(inquiry.message).replace(/^/gm, '  ')}\n\nDeliveries\n`,
    );
    if (deliveries.length === 0) out('  none (no delivery channel was configured when it arrived)\n');
    for (const delivery of deliveries) {
      out(`  ${delivery.channel}: ${delivery.status}, ${delivery.attempts} attempt(s)`);
      out(delivery.status === 'pending' ? `, next run ${iso(delivery.runAt)}\n` : `, finished ${iso(delivery.finishedAt)}\n`);
      if (delivery.lastError) out(`    last error: ${indentedError(delivery.lastError, '      ')}\n`);
      for (const attempt of delivery.history) {
        const error = attempt.error ? `  ${indentedError(attempt.error, '      ')}` : '';
        out(`    #${attempt.attempt} ${iso(attempt.attemptedAt)} ${attempt.outcome} ${attempt.durationMs} ms${error}\n`);
      }
    }
    return 0;
  };
}

/** With --with-verdict, after the others: a reader of the plain CSV finds its columns where they were. */
const CSV_VERDICT_HEADER = ['verdict', 'reasons'];

export function exportInquiries(values: Values, positionals: readonly string[]): Work {
  if (positionals.length > 0) throw new UsageError(`export takes no reference (got ${positionals[0]})`);
  const format = values.format;
  if (format !== 'csv' && format !== 'json') throw new UsageError('export needs --format csv or --format json');
  const since = parseSince(values.since);
  const output = typeof values.output === 'string' ? values.output : undefined;
  const withVerdict = values['with-verdict'] === true;
  if (withVerdict && format !== 'csv') throw new UsageError('--with-verdict is for --format csv (JSON always carries the verdict)');
  const csvOf = (entry: ReturnType<typeof withDeliveries>) => csvValues(entry, entry.deliveries);
  const csvRow = (entry: ReturnType<typeof withDeliveries>) =>
    csvRecord(withVerdict ? [...csvOf(entry), entry.verdict, JSON.stringify(entry.reasons)] : csvOf(entry));
  return async (store) => {
    let count = 0;
    async function* chunks() {
      yield format === 'csv' ? csvRecord(withVerdict ? [...CSV_HEADER, ...CSV_VERDICT_HEADER] : CSV_HEADER) : '[';
      for await (const entry of allInquiries(store, since)) {
        yield format === 'csv' ? csvRow(entry) : `${count === 0 ? '' : ','}\n${JSON.stringify(entry)}`;
        count++;
      }
      if (format === 'json') yield '\n]\n';
    }
    // pipeline() handles backpressure and stops reading the store if the file cannot be written.
    try {
      if (output === undefined) await pipeline(Readable.from(chunks()), process.stdout, { end: false });
      else await pipeline(Readable.from(chunks()), createWriteStream(output));
    } catch (error) {
      return fail(`export failed: ${(error as Error).message}`);
    }
    if (output !== undefined) out(`Exported ${count} ${count === 1 ? 'inquiry' : 'inquiries'} to ${output}\n`);
    return 0;
  };
}

/**
 * Every inquiry (received at or after `since`), newest first, a page at a time, each going on after
 * the last row of the one before (not by offset: linear time, and an inquiry arriving meanwhile
 * moves nothing).
 */
async function* allInquiries(store: Store, since: Date | undefined) {
  let after: InquiryRecord | undefined;
  while (true) {
    const page = await store.inquiries.list({ limit: EXPORT_PAGE_SIZE, ...(since && { since }), ...(after && { after }) });
    const references = page.map((inquiry) => inquiry.reference);
    const [deliveries, judgements] = await Promise.all([store.outbox.forReferences(references), store.inquiries.judgements(references)]);
    for (const inquiry of page) yield withDeliveries(inquiry, deliveries, judgements);
    after = page.at(-1);
    if (page.length < EXPORT_PAGE_SIZE) return;
  }
}

export function requeue(values: Values, positionals: readonly string[]): Work {
  const reference = onlyReference(positionals, false);
  if (reference === undefined && !values.all) {
    throw new UsageError('requeue needs an inquiry reference, or --all to re-queue every failed delivery');
  }
  if (reference !== undefined && values.all) throw new UsageError('give either a reference or --all, not both');
  return async (store) => {
    if (reference !== undefined && !(await store.inquiries.findByReference(reference))) return fail(`no inquiry ${reference}`);
    const count = await store.outbox.requeue(new Date(), reference);
    const scope = reference === undefined ? '' : ` of ${reference}`;
    if (count === 0) {
      out(`Nothing to re-queue: no failed or dead deliveries${scope}.\n`);
    } else {
      // The CLI never sends anything itself: the running server's worker polls the outbox every second.
      out(`Re-queued ${count} ${count === 1 ? 'delivery' : 'deliveries'}${scope}; a running server sends them within a few seconds.\n`);
    }
    return 0;
  };
}

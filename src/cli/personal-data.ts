// The CLI's commands on one person's data (docs/operations.md, "Personal data"): `erase` and
// `export --email`. The work is the domain's (src/personal-data/); this file reads the arguments and
// says what was done.
import { writeFile } from 'node:fs/promises';
import type { Config } from '../config.js';
import { erasable, erasePerson } from '../personal-data/erase.js';
import { exportPerson } from '../personal-data/export.js';
import { dataSubject, senderOf } from '../personal-data/subject.js';
import type { DataSubject, ErasedData, Scrub } from '../storage/personal-data-ports.js';
import type { DeliveryRecord } from '../storage/ports.js';
import { UsageError, type Values, type Work } from './commands.js';
import { iso, printableLine, systemErrorText } from './format.js';
import { verdictReference } from './verdicts.js';

const out = (text: string) => process.stdout.write(text);
const fail = (message: string): number => {
  process.stderr.write(`studio-inquiry: ${message}\n`);
  return 1;
};
const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** `--email ADDRESS` checked, or undefined when not given. */
function emailOption(values: Values): DataSubject | undefined {
  if (values.email === undefined) return undefined;
  const subject = dataSubject(String(values.email));
  if ('problem' in subject) throw new UsageError(printableLine(subject.problem));
  return subject;
}

/** `erase --email ADDRESS [--dry-run]` or `erase REFERENCE [--dry-run]`. */
export function erase(values: Values, positionals: readonly string[]): Work {
  const byEmail = emailOption(values);
  if (byEmail !== undefined && positionals.length > 0) throw new UsageError('give either --email or an inquiry reference, not both');
  if (byEmail === undefined && positionals.length === 0) {
    throw new UsageError('erase needs --email ADDRESS, or the reference of an inquiry of the person (e.g. INQ-7K2M9Q)');
  }
  const reference = byEmail === undefined ? verdictReference(positionals) : undefined;
  if (typeof reference === 'object') throw new UsageError(printableLine(reference.problem));
  const dryRun = values['dry-run'] === true;

  return async (_store, config, personalData) => {
    const subject = byEmail ?? (await senderOf(personalData, reference as string));
    if (subject === undefined) return fail(`no inquiry ${reference}`);
    const who = printableLine(subject.email);
    if (reference !== undefined) out(`${reference} was sent by ${who}: the erase is of everything held about that address.\n`);
    if (dryRun) {
      const held = erasable(await personalData.find(subject));
      out(isEmpty(held) ? `Nothing is held about ${who}.\n` : `Would erase (--dry-run: nothing is changed):\n${listing(held)}`);
      return 0;
    }
    const outcome = await erasePerson(personalData, subject, {
      waitMs: config.deliveryLeaseMs,
      onWaiting: (inFlight) =>
        out(`Waiting for ${inFlightText(inFlight)} being sent now to end (at most ${config.deliveryLeaseMs / 1000} s)…\n`),
    });
    if ('inFlight' in outcome) {
      return fail(
        `${inFlightText(outcome.inFlight)} still being sent after ${config.deliveryLeaseMs / 1000} s; nothing was erased: run the command again`,
      );
    }
    const erased = !isEmpty(outcome.erased);
    out(erased ? `Erased everything held about ${who}:\n${listing(outcome.erased)}` : `Nothing is held about ${who}.\n`);
    return reportScrub(outcome.scrub, config, erased);
  };
}

/** `export --email ADDRESS --format json [--output FILE]`: one person's data, as one JSON document. */
export function exportPersonalData(values: Values, positionals: readonly string[]): Work {
  const subject = emailOption(values) as DataSubject;
  if (positionals.length > 0) throw new UsageError(`export takes no reference (got ${positionals[0]})`);
  if (values.format !== 'json') throw new UsageError('export --email gives everything held about the person as JSON: use --format json');
  for (const option of ['since', 'with-verdict']) {
    if (values[option] !== undefined) throw new UsageError(`--${option} is for the export of every inquiry, not with --email`);
  }
  const output = typeof values.output === 'string' ? values.output : undefined;
  return async (_store, _config, personalData) => {
    const document = await exportPerson(personalData, subject);
    const text = `${JSON.stringify(document, null, 2)}\n`;
    if (output === undefined) {
      out(text);
      return 0;
    }
    try {
      // Only its owner reads it: it is on its way to the person it is about.
      await writeFile(output, text, { mode: 0o600 });
    } catch (error) {
      return fail(`export failed: ${systemErrorText(error)}`);
    }
    out(
      `Exported everything held about ${printableLine(subject.email)} (${plural(document.inquiries.length, 'inquiry', 'inquiries')}) to ${output}\n`,
    );
    return 0;
  };
}

const isEmpty = (data: ErasedData) =>
  data.inquiries.length +
    data.deliveries +
    data.idempotencyKeys +
    data.agentRegistrations.length +
    data.agentClaims +
    data.serviceMails +
    data.codesMailed +
    data.signIns +
    data.refreshTokens ===
  0;

/** What an erase deleted (or would), a kind a line, each inquiry and registration named. */
function listing(data: ErasedData): string {
  const rows: [string, number, string[]][] = [
    ['inquiries', data.inquiries.length, data.inquiries.map(({ reference, receivedAt }) => `${reference} received ${iso(receivedAt)}`)],
    ['deliveries', data.deliveries, []],
    ['delivery attempts', data.attempts, []],
    ['idempotency keys', data.idempotencyKeys, []],
    ['agent registrations', data.agentRegistrations.length, [...data.agentRegistrations]],
    ['agent claims', data.agentClaims, []],
    ['service mails', data.serviceMails, []],
    ['claim codes mailed', data.codesMailed, []],
    ['OAuth sign-ins', data.signIns, []],
    ['OAuth refresh tokens', data.refreshTokens, []],
  ];
  return rows.map(([kind, count, names]) => `  ${kind.padEnd(21)}${count}\n${names.map((name) => `    ${name}\n`).join('')}`).join('');
}

function inFlightText(deliveries: readonly DeliveryRecord[]): string {
  const which = deliveries.map(({ reference, channel }) => `${reference ?? 'a service mail'} by ${channel}`).join(', ');
  return `${plural(deliveries.length, 'delivery', 'deliveries')} (${which})`;
}

/**
 * What became of the erased rows in the database's files; exit code 1 where the write-ahead log
 * still holds copies (run again: with nothing left to erase, it empties the log).
 */
function reportScrub(scrub: Scrub, config: Config, erased: boolean): number {
  if (scrub.dialect === 'postgres') {
    if (erased) {
      out(
        'PostgreSQL keeps old row versions in its files until VACUUM reuses their space, and in WAL archives and backups until they expire (docs/operations.md, "Personal data").\n',
      );
    }
    return 0;
  }
  const path = config.database.kind === 'sqlite' ? config.database.path : '';
  if (!scrub.walEmptied) {
    return fail(
      `the write-ahead log ${path}-wal could not be emptied: the service kept reading it. It may still hold earlier copies of erased rows: run the command again`,
    );
  }
  out(
    erased
      ? `The erased rows are overwritten in ${path}, and its write-ahead log is emptied.\n`
      : `The write-ahead log of ${path} is emptied.\n`,
  );
  return 0;
}

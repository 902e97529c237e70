// The studio's command-line tool (`npx studio-inquiry`, `npm run inquiries -- <command>`): read the
// inbox, export it, re-queue failed deliveries, erase or export one person's data. Same environment
// and database as the server, but no delivery worker: the CLI beside it never sends anything.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { configuredChannels } from '../inquiries/verdicts.js';
import { backup } from './backup.js';
import { exportInquiries, LIST_LIMIT_MAX, list, requeue, show, UsageError, type Values, type Work } from './commands.js';
import { digest } from './digest.js';
import { systemErrorText } from './format.js';
import { type Inbox, InboxError, openInbox } from './inbox.js';
import { inboxLink, sessions } from './inbox-access.js';
import { erase, exportPersonalData } from './personal-data.js';
import { moveInquiry, verdictReference } from './verdicts.js';

const USAGE = `Usage: studio-inquiry <command> [options]

Commands:
  list [--spam] [--limit N] [--since <ISO date>] [--json]
      The newest inquiries (50 unless --limit, at most ${LIST_LIMIT_MAX}) with each channel's
      delivery state, attempts and last error; with --spam the quarantine, with the reasons.
  show <reference> [--json]
      One inquiry in full with its verdict, score and reasons, its deliveries and every attempt.
  export --format csv|json [--with-verdict] [--since <ISO date>] [--output <file>]
      Every inquiry, to standard output or a file (CSV with --with-verdict: verdict and reasons too).
  release <reference>
      Move a quarantined inquiry to the inbox and queue its deliveries; the running server sends them.
  spam <reference>
      Move an inbox inquiry to the quarantine (deliveries already made stay made).
  digest --send
      Queue the digest of what went to the quarantine since the last digest now (by email to
      INQUIRY_TO, else to the webhook); the running server sends it.
  requeue <reference> | requeue --all
      Put failed and dead deliveries back in the queue; the running server sends them.
  backup <file>
      A consistent copy of the SQLite database, taken while the server runs, written 0600.
      Never overwrites a file. For PostgreSQL use pg_dump.
  erase --email <address> [--dry-run] | erase <reference> [--dry-run]
      Delete everything held about a person (an address in any case; a reference: its sender's
      address): inquiries, deliveries, agent registrations, claims, mails. --dry-run lists it.
  export --email <address> --format json [--output <file>]
      Everything held about a person, as one JSON document.
  inbox-link <address>
      Print a one-time sign-in link to the inbox for one of INBOX_USERS (works once, 15 minutes).
  sessions revoke --all
      Sign everybody out of the inbox.
  help
      This text.

An ISO date is a day (2025-01-31) or a date-time (2025-01-31T09:00:00Z); one without a zone is UTC.
Configuration comes from the same environment variables as the server, notably
DATABASE_URL (default sqlite:data/studio.db, relative to the current directory). The CLI
never creates or upgrades the database: that is the server's part, as it starts.
Exit codes: 0 success, 1 error (configuration, database, unknown reference), 2 wrong usage.
`;

type Options = NonNullable<ParseArgsConfig['options']>;

const help: Options = { help: { type: 'boolean', short: 'h' } };
const json: Options = { json: { type: 'boolean' } };
const since: Options = { since: { type: 'string' } };
const email: Options = { email: { type: 'string' } };

const COMMANDS: Record<string, { options: Options; prepare: (values: Values, positionals: string[]) => Work }> = {
  list: { options: { ...help, ...json, ...since, limit: { type: 'string' }, spam: { type: 'boolean' } }, prepare: list },
  show: { options: { ...help, ...json }, prepare: show },
  export: {
    options: {
      ...help,
      ...since,
      ...email,
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      'with-verdict': { type: 'boolean' },
    },
    prepare: (values, positionals) => (values.email === undefined ? exportInquiries : exportPersonalData)(values, positionals),
  },
  erase: { options: { ...help, ...email, 'dry-run': { type: 'boolean' } }, prepare: erase },
  requeue: { options: { ...help, all: { type: 'boolean' } }, prepare: requeue },
  backup: { options: help, prepare: backup },
  release: { options: help, prepare: (_values, positionals) => toVerdict('inbox', positionals) },
  spam: { options: help, prepare: (_values, positionals) => toVerdict('spam', positionals) },
  digest: { options: { ...help, send: { type: 'boolean' } }, prepare: digest },
  'inbox-link': { options: help, prepare: inboxLink },
  sessions: { options: { ...help, all: { type: 'boolean' } }, prepare: sessions },
};

function toVerdict(verdict: 'inbox' | 'spam', positionals: readonly string[]): Work {
  const reference = verdictReference(positionals);
  if (typeof reference !== 'string') throw new UsageError(reference.problem);
  return (store, config) => moveInquiry(store, reference, verdict, configuredChannels(config));
}

/** Runs one command line (without `node` and the script) and resolves to the exit code. */
export async function run(args: readonly string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined; // not "toString" & co.
  if (!command) {
    process.stderr.write(`studio-inquiry: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }

  let work: Work;
  try {
    const { values, positionals } = parseArgs({ args: [...rest], options: command.options, allowPositionals: true, strict: true });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    work = command.prepare(values, positionals);
  } catch (error) {
    // parseArgs reports unknown options and missing values as TypeErrors with an ERR_PARSE_ARGS code.
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return usageError((error as Error).message);
    }
    throw error;
  }

  const opened = await openConfiguredStore();
  if (typeof opened === 'number') return opened;
  const { inbox, config } = opened;
  const { store, personalData, inboxStore } = inbox;
  try {
    return await work(store, config, personalData, inboxStore);
  } catch (error) {
    // A database error mid-command (locked past busy_timeout, disk full): a line, not a stack trace.
    process.stderr.write(`studio-inquiry: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

function usageError(message: string): number {
  process.stderr.write(`studio-inquiry: ${message}\nRun "studio-inquiry help" for the usage.\n`);
  return 2;
}

/** The store, or exit code 1 after one line on stderr saying which setting is wrong. */
async function openConfiguredStore(): Promise<{ inbox: Inbox; config: Config } | number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`studio-inquiry: invalid configuration: ${error.message}\n`);
    return 1;
  }
  try {
    return { inbox: await openInbox(config.database), config };
  } catch (error) {
    if (!(error instanceof InboxError)) throw error;
    process.stderr.write(`studio-inquiry: DATABASE_URL: ${error.message}\n`);
    return 1;
  }
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // `studio-inquiry list | head` closes the pipe early; that is the reader's choice, not an error.
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  // Any other failure (a full disk, a file system gone read-only) loses output: a line, not a stack
  // trace. Exiting at once is safe: a command writes to stdout only after its one write has committed.
  process.stderr.write(`studio-inquiry: cannot write the output: ${systemErrorText(error)}\n`);
  process.exit(1);
});

// The CLI as the studio runs it: `node bin/studio-inquiry.js …` as a child process against a real
// SQLite database written by the real application, with a webhook channel whose first delivery fails.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/storage/database.js';
import type { DeliveryRecord } from '../../src/storage/ports.js';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase, POSTGRES_ADMIN_URL } from '../helpers/databases.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type TestWebhookReceiver } from '../helpers/webhook.js';

const BIN = fileURLToPath(new URL('../../bin/studio-inquiry.js', import.meta.url));

const failing = validInquiry({ message: 'The first brief, whose webhook is refused.' });
const awkward = validInquiry({
  firstName: 'Grace',
  lastName: 'Hopper',
  email: 'grace@example.com',
  company: 'Hopper, "Cobol" & Sons',
  message: 'Line one\nLine two, with "quotes", and a comma',
});
const formula = validInquiry({
  firstName: 'Alan',
  lastName: 'Turing',
  email: 'alan@example.com',
  company: '=HYPERLINK("http://evil.example","click")',
  message: '+44 20 7946 0000, please call',
});

let app: TestApp;
let receiver: TestWebhookReceiver;
let database: string;
const refs = { failing: '', awkward: '', formula: '' };

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI from the temp directory (not the project) with a minimal, explicit environment. */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: app.dir,
        timeout: 20_000,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: `sqlite:${database}`, LOG_LEVEL: 'silent', ...env },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs the CLI with its standard output on `path` (a device such as /dev/full), as `> path` does. */
function cliWritingTo(path: string, args: readonly string[]): Promise<Omit<Run, 'stdout'>> {
  const fd = openSync(path, 'w');
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: app.dir,
    stdio: ['ignore', fd, 'pipe'],
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: `sqlite:${database}`, LOG_LEVEL: 'silent' },
  });
  closeSync(fd);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stderr })));
}

/** A port on this machine that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForDelivery(reference: string, done: (delivery: DeliveryRecord) => boolean): Promise<DeliveryRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [delivery] = await app.services.store.outbox.forReference(reference);
    if (delivery && done(delivery)) return delivery;
    if (Date.now() > deadline) throw new Error(`delivery of ${reference} is ${JSON.stringify(delivery)}`);
    await sleep(25);
  }
}

/** A small RFC 4180 reader: quoted fields, doubled quotes, CRLF record ends. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted && char === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (char === '"') {
      quoted = !quoted;
    } else if (!quoted && char === ',') {
      record.push(field);
      field = '';
    } else if (!quoted && char === '\r' && text[i + 1] === '\n') {
      records.push([...record, field]);
      record = [];
      field = '';
      i++;
    } else {
      field += char;
    }
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  receiver.script.push(400); // the first delivery is refused: a permanent failure
  app = await startTestApp({ env: { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET } });
  database = join(app.dir, 'studio.db');

  refs.failing = (await app.services.inquiries.submit(failing)).reference;
  await waitForDelivery(refs.failing, (delivery) => delivery.status === 'failed');
  refs.awkward = (await app.services.inquiries.submit(awkward)).reference;
  await waitForDelivery(refs.awkward, (delivery) => delivery.status === 'succeeded');
  refs.formula = (await app.services.inquiries.submit(formula)).reference;
  await waitForDelivery(refs.formula, (delivery) => delivery.status === 'succeeded');
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

describe('studio-inquiry CLI', () => {
  it('prints the usage for help and no command, and exits 2 on an unknown command', async () => {
    for (const run of await Promise.all([cli([]), cli(['help']), cli(['--help'])])) {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: studio-inquiry/);
      for (const command of ['list', 'show', 'export', 'requeue']) expect(run.stdout).toContain(`  ${command}`);
    }
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage: studio-inquiry');
  });

  it('lists inquiries newest first with each delivery state, attempts and last error', async () => {
    const [run, limited, future, wrong] = await Promise.all([
      cli(['list']),
      cli(['list', '--limit', '1', '--json']),
      cli(['list', '--since', '2999-01-01']),
      cli(['list', '--limit', 'ten']),
    ]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^REFERENCE\s+RECEIVED\s+NAME\s+EMAIL\s+COMPANY\s+DELIVERIES\s+LAST ERROR$/);
    expect(lines.slice(1).map((line) => line.split(' ')[0])).toEqual([refs.formula, refs.awkward, refs.failing]);
    expect(lines[1]).toMatch(/Alan Turing\s+alan@example\.com .*webhook:succeeded\s+-$/);
    expect(lines[3]).toMatch(
      /Ada Lovelace\s+ada@example\.com\s+Analytical Engines Ltd\s+webhook:failed\(1\)\s+webhook: webhook answered HTTP 400$/,
    );

    expect(limited.code).toBe(0);
    const entries = JSON.parse(limited.stdout);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ reference: refs.formula, company: formula.company, deliveries: [{ status: 'succeeded' }] });

    expect(future.stdout).toBe('No inquiries.\n');
    expect(wrong.code).toBe(2);
  });

  it('shows one inquiry in full with its delivery attempts, by a lower-case reference', async () => {
    const [run, failed, asJson] = await Promise.all([
      cli(['show', refs.awkward.toLowerCase()]),
      cli(['show', refs.failing]),
      cli(['show', refs.failing, '--json']),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Reference ${refs.awkward}`);
    expect(run.stdout).toContain('Company   Hopper, "Cobol" & Sons');
    expect(run.stdout).toContain('Message\n  Line one\n  Line two, with "quotes", and a comma\n');

    expect(failed.code).toBe(0);
    expect(failed.stdout).toContain('webhook: failed, 1 attempt(s)');
    expect(failed.stdout).toContain('last error: webhook answered HTTP 400');
    expect(failed.stdout).toMatch(/#1 \d{4}-\d\d-\d\dT[\d:.]+Z failed \d+ ms {2}webhook answered HTTP 400/);

    const json = JSON.parse(asJson.stdout);
    expect(json).toMatchObject({ reference: refs.failing, message: failing.message, deliveries: [{ status: 'failed', attempts: 1 }] });
    expect(json.deliveries[0].history).toMatchObject([{ attempt: 1, outcome: 'failed', error: 'webhook answered HTTP 400' }]);
  });

  it('exits 1 with a message for an unknown reference, and 2 for an argument that is no reference', async () => {
    const run = await cli(['show', 'INQ-000000']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('studio-inquiry: no inquiry INQ-000000\n');
    // Typed as a person would (lower case, no prefix, O for 0): the same reference.
    expect((await cli(['show', 'ooOooo'])).stderr).toBe('studio-inquiry: no inquiry INQ-000000\n');
    for (const [command, argument] of [
      ['show', 'foo'],
      ['show', 'INQ-0000000'],
      ['requeue', 'INQ-00U000'],
    ]) {
      const usage = await cli([command as string, argument as string]);
      expect(usage.code, argument).toBe(2);
      expect(usage.stdout).toBe('');
      expect(usage.stderr).toContain(`"${argument}" is not an inquiry reference such as INQ-7K2M9Q`);
    }
  });

  it('exports CSV that reads back to the stored values, with formulas neutralised', async () => {
    const run = await cli(['export', '--format', 'csv']);
    expect(run.code).toBe(0);
    const [header, ...records] = parseCsv(run.stdout);
    expect(header).toEqual(['reference', 'receivedAt', 'firstName', 'lastName', 'email', 'company', 'message', 'clientId', 'deliveries']);
    expect(records.map((record) => record[0])).toEqual([refs.formula, refs.awkward, refs.failing]);
    const [formulaRow, awkwardRow, failingRow] = records;
    expect(awkwardRow?.slice(2)).toEqual([
      'Grace',
      'Hopper',
      'grace@example.com',
      awkward.company,
      awkward.message,
      '',
      'webhook:succeeded',
    ]);
    expect(formulaRow?.[5]).toBe(`'${formula.company}`);
    expect(formulaRow?.[6]).toBe(`'${formula.message}`);
    expect(failingRow?.[8]).toBe('webhook:failed(1)');
    expect(failingRow?.[1]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // Exact bytes: RFC 4180 quoting and CRLF record ends, the newline inside the quoted message kept.
    expect(run.stdout).toContain(',"Hopper, ""Cobol"" & Sons","Line one\nLine two, with ""quotes"", and a comma",,webhook:succeeded\r\n');
    expect(run.stdout).not.toMatch(/(^|,)"?[=+\-@]/m);
  });

  it('exports JSON to a file', async () => {
    const output = join(app.dir, 'export.json');
    const [run, withoutFormat] = await Promise.all([cli(['export', '--format', 'json', '--output', output]), cli(['export'])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`Exported 3 inquiries to ${output}\n`);
    const entries = JSON.parse(readFileSync(output, 'utf8'));
    expect(entries.map((entry: { reference: string }) => entry.reference)).toEqual([refs.formula, refs.awkward, refs.failing]);
    expect(entries[1]).toMatchObject({ ...awkward, clientId: null, deliveries: [{ channel: 'webhook', status: 'succeeded' }] });
    expect(withoutFormat.code).toBe(2);
    expect(withoutFormat.stderr).toContain('--format csv or --format json');
  });

  it('re-queues a failed delivery only when told which', async () => {
    const refused = await cli(['requeue']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--all');
    expect((await app.services.store.outbox.forReference(refs.failing))[0]?.status).toBe('failed');

    const run = await cli(['requeue', refs.failing.toLowerCase()]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Re-queued 1 delivery of ${refs.failing}`);
    const [delivery] = await app.services.store.outbox.forReference(refs.failing);
    expect(delivery?.status === 'pending' || (delivery?.attempts ?? 0) > 1).toBe(true);
    // The app's worker picks it up; the receiver's script is used up, so it now answers 200.
    const retried = await waitForDelivery(refs.failing, (d) => d.status === 'succeeded');
    expect(retried.attempts).toBe(2);

    const again = await cli(['requeue', '--all']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Nothing to re-queue');
  });

  it('exits 1 with one line naming DATABASE_URL when it is wrong or points at no database', async () => {
    const [bad, missing] = await Promise.all([
      cli(['list'], { DATABASE_URL: 'mysql://x' }),
      cli(['list'], { DATABASE_URL: `sqlite:${join(app.dir, 'missing', 'studio.db')}` }),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('DATABASE_URL');

    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^studio-inquiry: DATABASE_URL: no database at .*missing/);
  });

  it('says in one line why the database cannot be opened, never with the password', async () => {
    const port = await closedPort();
    const unknown = `studio_inquiry_test_missing_${randomBytes(6).toString('hex')}`;
    const notSqlite = join(app.dir, 'notes.txt');
    writeFileSync(notSqlite, 'Not a database, only notes. '.repeat(40));
    const [refused, missing, nobody, text] = await Promise.all([
      cli(['list'], { DATABASE_URL: `postgres://postgres:hunter2-secret@127.0.0.1:${port}/studio` }),
      cli(['list'], {
        DATABASE_URL: POSTGRES_ADMIN_URL.replace(/\/\/postgres@/, '//postgres:hunter2-secret@').replace(/\/postgres$/, `/${unknown}`),
      }),
      cli(['list'], { DATABASE_URL: POSTGRES_ADMIN_URL.replace(/\/\/postgres@/, `//${unknown}:hunter2-secret@`) }),
      cli(['list'], { DATABASE_URL: `sqlite:${notSqlite}` }),
    ]);
    const cannotOpen = 'studio-inquiry: DATABASE_URL: cannot open the database: ';
    expect(refused.stderr).toBe(`${cannotOpen}connection refused at 127.0.0.1:${port}\n`);
    expect(missing.stderr).toBe(`${cannotOpen}database "${unknown}" does not exist\n`);
    expect(nobody.stderr).toBe(`${cannotOpen}role "${unknown}" does not exist\n`);
    expect(text.stderr).toBe(`${cannotOpen}file is not a database\n`);
    for (const run of [refused, missing, nobody, text]) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
    }
  });

  it('refuses a --limit beyond 10,000 and a --since that is no real day, as usage errors', async () => {
    const [huge, above, most, february30, notLeap, leap, noHour] = await Promise.all([
      cli(['list', '--limit', '99999999999999999999']),
      cli(['list', '--limit', '10001']),
      cli(['list', '--limit', '10000']),
      cli(['list', '--since', '2025-02-30']),
      cli(['export', '--format', 'csv', '--since', '2025-02-29']),
      cli(['list', '--since', '2024-02-29']),
      cli(['list', '--since', '2025-01-31T24:00:00Z']),
    ]);
    for (const run of [huge, above]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('is not a whole number from 1 to 10000');
    }
    expect(most.code).toBe(0);
    for (const run of [february30, notLeap, noHour]) {
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('is not a real ISO date');
    }
    expect(leap.code).toBe(0);
    expect(leap.stdout.split('\n')).toHaveLength(5); // the header, three inquiries and the end
  });

  it('reads a --since without a zone as UTC, whatever the time zone of the machine', async () => {
    const [newest] = JSON.parse((await cli(['list', '--limit', '1', '--json'])).stdout) as { reference: string; receivedAt: string }[];
    if (!newest) throw new Error('no inquiry listed');
    // The newest inquiry's time of arrival in UTC, to the second, without a zone: at or before it.
    const atOrBefore = newest.receivedAt.slice(0, 19);
    const after = new Date(Date.parse(`${atOrBefore}Z`) + 1_000).toISOString().slice(0, 19);
    const [west, east] = await Promise.all([
      // Read in New York's time, the first would be five hours later and leave the inquiry out;
      // read in Tokyo's, the second would be nine hours earlier and take it in.
      cli(['list', '--json', '--since', atOrBefore], { TZ: 'America/New_York' }),
      cli(['list', '--json', '--since', after], { TZ: 'Asia/Tokyo' }),
    ]);
    expect(JSON.parse(west.stdout).map((entry: { reference: string }) => entry.reference)).toContain(newest.reference);
    expect(JSON.parse(east.stdout)).toEqual([]);
  });

  it('says in one line that the output cannot be written, as on a full disk', async () => {
    const runs = await Promise.all([
      cliWritingTo('/dev/full', ['list']),
      cliWritingTo('/dev/full', ['export', '--format', 'csv']),
      cliWritingTo('/dev/full', ['help']),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('studio-inquiry: cannot write the output: no space left on device\n');
    }
  });
});

// The CLI never migrates: against a database without the inbox or with another release's schema,
// every command, reading or writing, refuses in one line and leaves the database as it was.
describe.each(BACKENDS)('studio-inquiry CLI on a database it was not built for ($name)', ({ fresh }) => {
  const COMMANDS = [['list'], ['show', 'INQ-7K2M9Q'], ['export', '--format', 'json'], ['requeue', '--all']];

  /** A database's tables, and the migrations it records (Kysely's table), read without the code under test. */
  async function schemaOf(config: DatabaseConfig): Promise<{ tables: string[]; migrations: string[] }> {
    const [tablesQuery, migrationsQuery] = [
      config.kind === 'sqlite'
        ? "select name from sqlite_master where type = 'table' order by name"
        : "select tablename as name from pg_tables where schemaname = 'public' order by tablename",
      'select name from kysely_migration order by name',
    ];
    if (config.kind === 'sqlite') {
      const sqlite = new SQLite(config.path, { readonly: true });
      try {
        const tables = sqlite.prepare(tablesQuery).pluck().all() as string[];
        const migrations = tables.includes('kysely_migration') ? (sqlite.prepare(migrationsQuery).pluck().all() as string[]) : [];
        return { tables, migrations };
      } finally {
        sqlite.close();
      }
    }
    const client = new pg.Client({ connectionString: config.url });
    await client.connect();
    try {
      const tables = (await client.query<{ name: string }>(tablesQuery)).rows.map((row) => row.name);
      const migrations = tables.includes('kysely_migration')
        ? (await client.query<{ name: string }>(migrationsQuery)).rows.map((row) => row.name)
        : [];
      return { tables, migrations };
    } finally {
      await client.end();
    }
  }

  /** A database the service has set up, then changed by `statement` (on Kysely's migration table). */
  async function inboxChangedBy(statement: string): Promise<FreshDatabase> {
    const changed = await fresh();
    const { db } = await openDatabase(changed.config);
    try {
      await sql.raw(statement).execute(db);
    } finally {
      await db.destroy();
    }
    return changed;
  }

  /** Runs every command against `database`: each must fail with `line`, and leave the schema as it was. */
  async function expectRefused(database: FreshDatabase, line: (before: { migrations: string[] }) => string): Promise<void> {
    try {
      const before = await schemaOf(database.config);
      const runs = await Promise.all(COMMANDS.map((args) => cli(args, { DATABASE_URL: database.url })));
      for (const run of runs) {
        expect(run.code).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(`studio-inquiry: DATABASE_URL: ${line(before)}\n`);
      }
      expect(await schemaOf(database.config)).toEqual(before);
    } finally {
      await database.drop();
    }
  }

  it('works on one at this release', async () => {
    const current = await inboxChangedBy('select 1');
    try {
      const [listed, requeued] = await Promise.all([
        cli(['list'], { DATABASE_URL: current.url }),
        cli(['requeue', '--all'], { DATABASE_URL: current.url }),
      ]);
      expect(listed).toEqual({ code: 0, stdout: 'No inquiries.\n', stderr: '' });
      expect(requeued).toMatchObject({ code: 0, stdout: 'Nothing to re-queue: no failed or dead deliveries.\n' });
    } finally {
      await current.drop();
    }
  });

  it('refuses one that holds no inbox and creates nothing in it', async () => {
    const empty = await fresh();
    if (empty.config.kind === 'sqlite') {
      const sqlite = new SQLite(empty.config.path);
      sqlite.exec('create table notes (x)');
      sqlite.close();
    }
    const where = empty.config.kind === 'sqlite' ? empty.config.path : `database "${empty.url.split('/').pop()}" on 127.0.0.1:5432`;
    await expectRefused(empty, () => `no inbox at ${where} (no studio-inquiry tables); check the address`);
  });

  it('refuses one that an older release set up, and does not upgrade it', async () => {
    const older = await inboxChangedBy('delete from kysely_migration where name = (select max(name) from kysely_migration)');
    await expectRefused(
      older,
      ({ migrations }) =>
        `the inbox's schema is at version ${migrations.length}, this release expects ${migrations.length + 1}: run the service once to upgrade it`,
    );
  });

  it('refuses one that a newer release upgraded', async () => {
    const newer = await inboxChangedBy(
      "insert into kysely_migration (name, timestamp) values ('999_from_a_newer_release', '2030-01-01T00:00:00.000Z')",
    );
    await expectRefused(
      newer,
      ({ migrations }) =>
        `the inbox's schema is at version ${migrations.length}, this release knows up to ${migrations.length - 1}: ` +
        "a newer release has upgraded it (migration 999_from_a_newer_release); use that release's CLI",
    );
  });
});

// The CLI as the studio runs it: `node bin/studio-inquiry.js …` as a child process against a real
// SQLite database written by the real application, with a webhook channel whose first delivery fails.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../src/storage/store.js';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
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

  it('exits 1 with a message for an unknown reference', async () => {
    const run = await cli(['show', 'INQ-000000']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('studio-inquiry: no inquiry INQ-000000\n');
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
});

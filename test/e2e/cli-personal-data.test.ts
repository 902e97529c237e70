// A person's data erased and exported with the CLI (`node bin/studio-inquiry.js`) beside the running
// service (`node dist/main.js`, a real SMTP server), on each backend: everything of theirs goes and
// nothing of anyone else, a pending delivery is never sent afterwards, one being sent is waited for,
// their agent's credentials stop working, and on SQLite the files' bytes hold none of it.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExistingDatabase } from '../../src/storage/database.js';
import type { OpenDatabase } from '../../src/storage/handle.js';
import type { DeliveryRecord, Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { referenceOf, tempDir, validInquiry } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const BIN = fileURLToPath(new URL('../../bin/studio-inquiry.js', import.meta.url));
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Someone else, whose data stays. */
const BOB = { firstName: 'Bob', lastName: 'Builder', email: 'bob@example.com', company: 'Bicycles Ltd' };
/** A line of a stack trace, which no refusal may print. */
const STACK_LINE = /\n\s+at /;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe.each(BACKENDS)('erase and export --email beside the running service ($name)', ({ name, fresh }) => {
  let smtp: TestSmtpServer;
  let database: FreshDatabase;
  let service: ServiceProcess;
  let opened: OpenDatabase;
  let store: Store;
  let dir: string;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    database = await fresh();
    dir = tempDir();
    service = await startService({ DATABASE_URL: database.url, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' });
    opened = await openExistingDatabase(database.config);
    store = createStore(opened);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    service?.child.kill('SIGTERM');
    await service?.exited;
    await smtp?.stop();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function cli(args: readonly string[]): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { cwd: dir, timeout: 60_000, env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, LOG_LEVEL: 'silent' } },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
      );
    });
  }

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${service.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  async function submit(fields: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
    const response = await post('/api/contact', validInquiry(fields), headers);
    expect(response.status).toBe(200);
    return referenceOf(await response.text());
  }

  const mailsWith = (text: string) => smtp.received.filter((mail) => mail.parsed.text?.includes(text));
  const mailed = (text: string) => until(`a mail with "${text}"`, () => mailsWith(text)[0]);
  const deliveryOf = (reference: string, done: (delivery: DeliveryRecord) => boolean) =>
    until(`the delivery of ${reference}`, async () => (await store.outbox.forReference(reference)).find(done));
  const exported = async (address: string) => {
    const run = await cli(['export', '--email', address, '--format', 'json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(run.stdout);
  };

  /** Which of `needles` the SQLite database file or its write-ahead log holds, as UTF-8 bytes. */
  function inFiles(needles: readonly string[]): string[] {
    if (database.config.kind !== 'sqlite') return [];
    const files = [database.config.path, `${database.config.path}-wal`].map((file) => readFileSync(file));
    return needles.filter((needle) => files.some((bytes) => bytes.includes(Buffer.from(needle, 'utf8'))));
  }

  it('exports everything held about a person, erases it all for an address in any case, and leaves everyone else', async () => {
    const bob = await submit({ ...BOB, message: 'BOB-BRIEF: a shop for bicycles' });
    const first = await submit(
      { email: 'Ada.Lovelace@Gmail.com', message: 'ADA-BRIEF-ONE: a website for the analytical engine' },
      { 'idempotency-key': 'ada-first-inquiry' },
    );

    // Ada registers an agent with her address, claims it with the code mailed to her, and sends through it.
    const registered = await post('/agent/register', {
      type: 'identity_assertion',
      assertion_type: 'verified_email',
      email: 'Ada.Lovelace@Gmail.com',
      client_name: 'Ada agent',
    });
    expect(registered.status).toBe(202);
    const { client_id: clientId, claim_token } = (await registered.json()) as { client_id: string; claim_token: string };
    const codeMail = await until('the claim code', () =>
      smtp.received.find((mail) => mail.envelope.to.some((to) => to.toLowerCase() === 'ada.lovelace@gmail.com')),
    );
    const otp = /\b(\d{6})\b/.exec(codeMail.parsed.text ?? '')?.[1];
    const claimed = await post('/agent/claim', { claim_token, otp });
    expect(claimed.status).toBe(200);
    const { identity_assertion } = (await claimed.json()) as { identity_assertion: string };
    const tokenRequest = () =>
      fetch(`${service.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion: identity_assertion }),
      });
    const { access_token } = (await (await tokenRequest()).json()) as { access_token: string };
    const second = await submit(
      { email: 'ada.lovelace@GMAIL.com', message: 'ADA-BRIEF-TWO: and its manual' },
      { authorization: `Bearer ${access_token}` },
    );
    for (const text of ['BOB-BRIEF', 'ADA-BRIEF-ONE', 'ADA-BRIEF-TWO']) await mailed(text);
    for (const reference of [bob, first, second]) await deliveryOf(reference, (delivery) => delivery.status === 'succeeded');

    const held = await exported('ADA.LOVELACE@gmail.com');
    expect(held).toMatchObject({
      email: 'ada.lovelace@gmail.com',
      inquiries: [
        {
          reference: first,
          email: 'Ada.Lovelace@Gmail.com',
          verdict: 'inbox',
          spamScore: 0,
          reasons: [],
          clientId: null,
          idempotencyKeys: [{ key: 'ada-first-inquiry', outcome: 'created' }],
          deliveries: [{ channel: 'email', status: 'succeeded', history: [{ attempt: 1, outcome: 'succeeded' }] }],
        },
        { reference: second, clientId, message: 'ADA-BRIEF-TWO: and its manual', deliveries: [{ status: 'succeeded' }] },
      ],
      agentRegistrations: [{ clientId, clientName: 'Ada agent', registrationType: 'verified_email', status: 'active' }],
      agentClaims: [{ clientId, status: 'claimed', email: 'Ada.Lovelace@Gmail.com' }],
      serviceMails: [{ to: 'Ada.Lovelace@Gmail.com', body: '', deliveries: [{ status: 'succeeded' }] }],
      codesMailed: [{ recipient: 'adalovelace@gmail.com', domain: 'gmail.com' }],
    });
    expect(JSON.stringify(held)).not.toMatch(/bob|BOB-BRIEF/i);

    const needles = ['ada.lovelace@gmail.com', 'Ada.Lovelace@Gmail.com', 'adalovelace@gmail.com', 'ADA-BRIEF-ONE', 'ADA-BRIEF-TWO'];
    if (name === 'SQLite') expect(inFiles(needles)).toContain('ADA-BRIEF-ONE');

    // A dry run lists, and changes nothing.
    const dry = await cli(['erase', '--email', 'ada.lovelace@gmail.com', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Would erase (--dry-run: nothing is changed):');
    expect(dry.stdout).toContain(`    ${first} received `);
    expect(dry.stdout).toMatch(/ {2}agent registrations +1\n {4}agt_/);
    expect({ ...(await exported('ada.lovelace@gmail.com')), exportedAt: null }).toEqual({ ...held, exportedAt: null });

    const run = await cli(['erase', '--email', 'ADA.lovelace@GMAIL.COM']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Erased everything held about ada.lovelace@gmail.com:\n');
    for (const line of [
      /inquiries +2\n/,
      /deliveries +3\n/,
      /delivery attempts +3\n/,
      /idempotency keys +1\n/,
      /agent registrations +1\n/,
      /agent claims +1\n/,
      /service mails +1\n/,
      /claim codes mailed +1\n/,
    ]) {
      expect(run.stdout).toMatch(line);
    }
    expect(run.stdout).toContain(name === 'SQLite' ? 'its write-ahead log is emptied' : 'until VACUUM reuses their space');

    expect(await exported('ada.lovelace@gmail.com')).toMatchObject({
      inquiries: [],
      agentRegistrations: [],
      agentClaims: [],
      serviceMails: [],
      codesMailed: [],
    });
    expect((await exported('bob@example.com')).inquiries).toMatchObject([{ reference: bob, deliveries: [{ status: 'succeeded' }] }]);
    // Nothing of Ada is left in the files' bytes, while the service has them open.
    expect(inFiles(needles)).toEqual([]);
    if (name === 'SQLite') expect(inFiles(['BOB-BRIEF'])).toEqual(['BOB-BRIEF']);

    // Her agent's credentials are refused: no new token, and the token it had attributes nothing.
    expect((await tokenRequest()).status).toBe(400);
    const anonymous = await post('/api/contact', validInquiry({ ...BOB, message: 'BOB-AGAIN' }), {
      authorization: `Bearer ${access_token}`,
    });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('www-authenticate')).toContain('invalid_token');
  }, 60_000);

  it('cancels a pending delivery for good, and waits for one being sent before erasing', async () => {
    // Carol's mail is refused for now: her delivery waits for its retry.
    smtp.rejectWith = 451;
    const carol = await submit({ email: 'Carol@Example.org', message: 'CAROL-BRIEF: never to be sent' });
    const pending = await deliveryOf(carol, (delivery) => delivery.status === 'pending' && delivery.attempts === 1);
    smtp.rejectWith = null;
    const run = await cli(['erase', '--email', 'carol@example.org']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/deliveries +1\n {2}delivery attempts +1\n/);
    // Past the time of its retry, the service still runs and sends others, and never Carol's.
    await sleep(Math.max(0, pending.runAt.getTime() - Date.now()) + 1_500);
    await submit({ ...BOB, message: 'BOB-AFTER-CAROL' });
    await mailed('BOB-AFTER-CAROL');
    expect(mailsWith('CAROL-BRIEF')).toEqual([]);

    // Dave's mail is being sent (the server takes its time): the erase waits for it, then erases.
    smtp.acceptDelayMs = 4_000;
    const dave = await submit({ email: 'dave@example.net', message: 'DAVE-BRIEF: sent once, then erased' });
    await until('the lease on the delivery', async () => {
      const row = await opened.db.selectFrom('deliveries').select('locked_until').where('reference', '=', dave).executeTakeFirst();
      return row?.locked_until ? row : undefined;
    });
    const waited = await cli(['erase', '--email', 'dave@example.net']);
    smtp.acceptDelayMs = 0;
    expect(waited.stderr).toBe('');
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(new RegExp(`^Waiting for 1 delivery \\(${dave} by email\\) being sent now to end`));
    expect(waited.stdout).toMatch(/deliveries +1\n {2}delivery attempts +1\n/);
    expect(mailsWith('DAVE-BRIEF')).toHaveLength(1);
    expect(await store.outbox.forReference(dave)).toEqual([]);
    await sleep(1_500);
    expect(mailsWith('DAVE-BRIEF')).toHaveLength(1);
    expect((await fetch(`${service.baseUrl}/api/health`)).status).toBe(200);
  }, 60_000);

  it('erases the sender of an inquiry given by reference: all they wrote from that address', async () => {
    const first = await submit({ email: 'eve@example.com', message: 'EVE-BRIEF-ONE' });
    const second = await submit({ email: 'EVE@Example.com', message: 'EVE-BRIEF-TWO' });
    await mailed('EVE-BRIEF-TWO');
    const dry = await cli(['erase', first, '--dry-run']);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toMatch(new RegExp(`^${first} was sent by eve@example.com: .*\nWould erase .*\n {2}inquiries +2\n`));
    // On SQLite a reader holding a snapshot keeps the write-ahead log from being emptied: said, exit 1.
    const reader = database.config.kind === 'sqlite' ? new SQLite(database.config.path, { readonly: true }) : undefined;
    reader?.prepare('begin').run();
    reader?.prepare('select count(*) from inquiries').get();
    const run = await cli(['erase', second.toLowerCase()]);
    reader?.prepare('commit').run();
    reader?.close();
    expect(run.stdout).toContain(`${second} was sent by eve@example.com: the erase is of everything held about that address.\n`);
    expect(run.stdout).toMatch(new RegExp(`inquiries +2\\n {4}${first} received .*\\n {4}${second} received `));
    expect(await store.inquiries.findByReference(first)).toBeUndefined();
    if (reader) {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^studio-inquiry: the write-ahead log .*-wal could not be emptied: the service kept reading it\..*run the command again\n$/,
      );
      const again = await cli(['erase', '--email', 'eve@example.com']);
      expect(again).toMatchObject({ code: 0, stderr: '' });
      expect(again.stdout).toMatch(/^Nothing is held about eve@example\.com\.\nThe write-ahead log of .* is emptied\.\n$/);
      expect(inFiles(['EVE-BRIEF-ONE', 'EVE-BRIEF-TWO', 'eve@example.com'])).toEqual([]);
    } else {
      expect(run).toMatchObject({ code: 0, stderr: '' });
    }
  }, 60_000);

  it('refuses bad input with one clear line and its exit code, never a stack trace', async () => {
    const cases: [string[], number, string][] = [
      [['erase'], 2, 'erase needs --email ADDRESS, or the reference of an inquiry of the person'],
      [['erase', '--email'], 2, "Option '--email <value>' argument missing"],
      [['erase', '--email', 'not-an-address'], 2, '"not-an-address" is not an email address such as ada@example.com'],
      [['erase', '--email', '   '], 2, 'missing the email address'],
      [['erase', '--email', 'a@b.example\u001b[31m'], 2, 'is not an email address'],
      [['erase', '--email', 'ada@example.com', 'INQ-7K2M9Q'], 2, 'give either --email or an inquiry reference, not both'],
      [['erase', 'foo'], 2, '"foo" is not an inquiry reference such as INQ-7K2M9Q'],
      [['erase', 'INQ-000000'], 1, 'no inquiry INQ-000000'],
      [['export', '--email', 'ada@example.com', '--format', 'csv'], 2, 'use --format json'],
      [['export', '--email', 'ada@example.com'], 2, 'use --format json'],
      [['export', '--email', 'nobody', '--format', 'json'], 2, '"nobody" is not an email address'],
      [
        ['export', '--email', 'ada@example.com', '--format', 'json', '--since', '2025-01-01'],
        2,
        '--since is for the export of every inquiry',
      ],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(args)));
    for (const [index, [args, code, message]] of cases.entries()) {
      const run = runs[index] as Run;
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr.split('\n')[0], args.join(' ')).toMatch(/^studio-inquiry: /);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stderr, args.join(' ')).not.toMatch(STACK_LINE);
      // Terminal escapes typed into an argument come back as escapes, not as control characters.
      expect(run.stderr).not.toContain('\u001b');
    }
    // Nobody by that address: nothing to erase or export, which is an answer, not an error.
    expect(await exported('nobody@example.com')).toMatchObject({ email: 'nobody@example.com', inquiries: [] });
    const nobody = await cli(['erase', '--email', 'nobody@example.com', '--dry-run']);
    expect(nobody).toEqual({ code: 0, stdout: 'Nothing is held about nobody@example.com.\n', stderr: '' });
  }, 60_000);
});

// `studio-inquiry backup FILE` taken while a real service process takes inquiries, then restored as
// docs/operations.md says (stop, put the copy in place, start): every inquiry answered before the
// backup began is in the copy, and the restored service delivers what was pending (real SMTP server).
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import { referenceOf, validInquiry } from '../helpers/app.js';
import { runCli as cli } from '../helpers/cli.js';
import { freshPostgres } from '../helpers/databases.js';
import { freePort, type ServiceProcess, startService } from '../helpers/process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function submit(service: ServiceProcess, index: number): Promise<string> {
  const response = await fetch(`${service.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(validInquiry({ email: `person-${index}@example.com`, message: `Brief number ${index} for the backup.` })),
  });
  expect(response.status).toBe(200);
  return referenceOf(await response.text());
}

describe('backup', () => {
  it('copies the database while inquiries flow, and the restored copy delivers what was pending', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'studio-inquiry-backup-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const live = join(folder, 'studio.db');
    const copy = join(folder, 'backups', 'studio-copy.db');
    // SMTP down: every delivery stays pending (retrying) in the live database.
    const down = await freePort();
    const env = { DATABASE_URL: `sqlite:${live}`, SMTP_URL: `smtp://127.0.0.1:${down}`, INQUIRY_TO: 'studio@example.com' };
    const first = await startService(env);
    cleanups.push(() => {
      first.child.kill('SIGKILL');
    });

    const before = await Promise.all(Array.from({ length: 20 }, (_, index) => submit(first, index)));
    // Inquiries keep arriving while the backup runs.
    let flowing = true;
    let sent = 20;
    const during: string[] = [];
    const flow = (async () => {
      while (flowing) during.push(await submit(first, sent++));
    })();
    // The folder of the copy does not exist: the CLI says so rather than creating it.
    expect((await cli(['backup', copy], { DATABASE_URL: `sqlite:${live}` })).code).toBe(1);
    mkdirSync(join(folder, 'backups'));
    const run = await cli(['backup', copy], { DATABASE_URL: `sqlite:${live}` });
    flowing = false;
    await flow;
    expect(during.length).toBeGreaterThan(0);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Backed up .*studio\.db to .*studio-copy\.db \(started .*, mode 0600\)\.\n$/);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    expect(existsSync(`${copy}.partial`)).toBe(false);
    // A second backup to the same file is refused: nothing is overwritten.
    expect(await cli(['backup', copy], { DATABASE_URL: `sqlite:${live}` })).toMatchObject({ code: 1, stdout: '' });
    first.child.kill('SIGTERM');
    await first.exited;

    const check = new SQLite(copy, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    const inCopy = new Set((check.prepare('select reference from inquiries').all() as { reference: string }[]).map((row) => row.reference));
    const pending = (check.prepare("select count(*) as n from deliveries where status = 'pending'").get() as { n: number }).n;
    check.close();
    for (const reference of before) expect(inCopy.has(reference)).toBe(true);
    expect(pending).toBe(inCopy.size);

    // Restored: the copy in place of the database, the service started on it with SMTP back.
    const smtp: TestSmtpServer = await startSmtpServer();
    cleanups.push(() => smtp.stop());
    rmSync(live);
    rmSync(`${live}-wal`, { force: true });
    rmSync(`${live}-shm`, { force: true });
    renameSync(copy, live);
    const restored = await startService({ ...env, SMTP_URL: smtp.url });
    cleanups.push(async () => {
      restored.child.kill('SIGTERM');
      await restored.exited;
    });
    await smtp.waitFor(inCopy.size, 30_000);
    const mailed = new Set(smtp.received.map((mail) => mail.parsed.subject?.split(' — ').at(-1)));
    expect(mailed).toEqual(inCopy);
  });

  it('refuses PostgreSQL, pointing to pg_dump, and wrong usage with exit code 2', async () => {
    const database = await freshPostgres();
    cleanups.push(() => database.drop());
    const migrated = await openDatabase(database.config);
    await migrated.db.destroy();
    const refused = await cli(['backup', join(tmpdir(), 'never-written.db')], { DATABASE_URL: database.url });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      'studio-inquiry: backup copies a SQLite database; back PostgreSQL up with pg_dump (docs/operations.md, "Backups")\n',
    );
    expect(existsSync(join(tmpdir(), 'never-written.db'))).toBe(false);
    expect(await cli(['backup'], { DATABASE_URL: database.url })).toMatchObject({ code: 2 });
    expect(await cli(['backup', 'a.db', 'b.db'], { DATABASE_URL: database.url })).toMatchObject({ code: 2 });
  });
});

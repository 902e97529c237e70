// SQLite transactions: the write lock from begin, failures SQLite rolls back itself, a file removed
// or replaced, another process holding the lock (a temporary SQLite file per test).
import { spawn } from 'node:child_process';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import type { Tx } from '../../src/storage/ports.js';
import type { Database } from '../../src/storage/schema.js';
import { freshSqlite, storePerTest } from '../helpers/databases.js';
import { inquiry } from '../helpers/store-fixtures.js';

describe('a transaction on SQLite', () => {
  const stores = storePerTest(freshSqlite);

  it('holds the write lock from its begin: another process cannot write between its reads and its writes, which would fail it', async () => {
    const { store: opened, database } = await stores.open();
    // Another process's connection (the CLI's) to the same file, which gives up at once when locked.
    const other = new SQLite(database.config.kind === 'sqlite' ? database.config.path : '');
    other.pragma('busy_timeout = 0');
    const write = other.prepare(
      `insert into inquiries (reference, first_name, last_name, email, message, fingerprint, received_at)
       values ('INQ-OTHER0', 'A', 'B', 'a@example.com', 'Hello', 'fp-other', 0)`,
    );
    try {
      await opened.transaction(async (tx) => {
        expect(await opened.inquiries.findByReference('INQ-MINE00', tx)).toBeUndefined(); // it reads first, as intake does
        // Begun deferred, this write would go through, and the transaction's own write below would
        // then fail at once (SQLITE_BUSY_SNAPSHOT: what it read is stale, and waiting cannot help).
        expect(() => write.run()).toThrow(/database is locked/);
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-MINE00'), fingerprint: 'fp-mine' }], tx);
      });
    } finally {
      other.close();
    }
    expect(await opened.inquiries.findByReference('INQ-MINE00')).toBeDefined();
  });
});

describe('SQLite failing under a transaction', () => {
  const stores = storePerTest(freshSqlite);
  async function open() {
    const { store, opened, database } = await stores.open();
    return { store, opened, path: database.config.kind === 'sqlite' ? database.config.path : '' };
  }
  const big = (n: number) => ({
    inquiry: { ...inquiry(`INQ-FF${String(n).padStart(4, '0')}`), message: 'x'.repeat(1_500) },
    fingerprint: `fp-full-${n}`,
  });

  it('fails with what went wrong when SQLite rolled it back itself (a full disk), not "no transaction is active"; the next commits', async () => {
    const { store, opened } = await open();
    // As SQLite does on some errors (SQLITE_FULL, SQLITE_IOERR) in the middle of a transaction.
    const endedBySqlite = store.transaction(async (tx) => {
      await store.inquiries.insertMany([big(1)], tx);
      await sql`rollback`.execute(tx as unknown as Kysely<Database>);
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    });
    await expect(endedBySqlite).rejects.toMatchObject({ code: 'SQLITE_FULL', message: 'database or disk is full' });
    expect(await store.inquiries.findByReference('INQ-FF0001')).toBeUndefined();
    // A database that reaches its size limit midway.
    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(opened.db)).rows[0]?.page_count);
    await sql.raw(`pragma max_page_count = ${pages + 4}`).execute(opened.db);
    const fill = async (tx: Tx) => {
      for (let n = 0; n < 100; n++) await store.inquiries.insertMany([big(n)], tx);
    };
    await expect(store.transaction(fill)).rejects.toMatchObject({
      code: 'SQLITE_FULL',
      message: 'database or disk is full',
    });
    expect(await store.inquiries.findByReference('INQ-FF0000')).toBeUndefined();
    await sql.raw('pragma max_page_count = 1073741823').execute(opened.db);
    await store.transaction((tx) => store.inquiries.insertMany([big(99)], tx));
    expect(await store.inquiries.findByReference('INQ-FF0099')).toBeDefined();
  });

  it.each(['removed', 'replaced'])(
    'commits nothing more, and fails its health check, once its file is %s while open (it would be lost at the next start)',
    async (how) => {
      const { store, path } = await open();
      await store.transaction((tx) => store.inquiries.insertMany([big(1)], tx));
      await store.ping();
      if (how === 'removed') rmSync(dirname(path), { recursive: true, force: true });
      else {
        copyFileSync(path, `${path}.backup`);
        renameSync(`${path}.backup`, path); // a backup moved over it
      }
      const gone = `the database file ${path} was removed or replaced while the service had it open`;
      await expect(store.transaction((tx) => store.inquiries.insertMany([big(2)], tx))).rejects.toThrow(gone);
      await expect(store.ping()).rejects.toThrow(gone);
      // A statement that commits by itself too (a revocation, a lease given back).
      await expect(store.auth.revokeToken('jti-after', new Date(Date.now() + 60_000), new Date())).rejects.toThrow(gone);
      await expect(store.outbox.releaseLeases()).rejects.toThrow(gone);
      expect(await store.inquiries.findByReference('INQ-FF0002')).toBeUndefined(); // rolled back, not committed unnamed
    },
  );
});

describe('a transaction on SQLite, while another process holds the lock', () => {
  const stores = storePerTest(freshSqlite);

  it('waits for it without holding up the event loop, then commits', async () => {
    const { store: opened, database } = await stores.open();
    const path = database.config.kind === 'sqlite' ? database.config.path : '';
    // Another process (an operator's sqlite3 shell, say) holds the write lock for 600 ms.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(path)});
         db.exec('begin immediate'); process.stdout.write('locked\\n');
         setTimeout(() => { db.exec('commit'); process.exit(0); }, 600);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    // The longest the event loop went without running a 5 ms timer, while the transaction waited.
    let last = performance.now();
    let longestGapMs = 0;
    const ticking = setInterval(() => {
      const now = performance.now();
      longestGapMs = Math.max(longestGapMs, now - last);
      last = now;
    }, 5);
    try {
      await opened.transaction(async (tx) => {
        await opened.inquiries.findByReference('INQ-WAITED', tx);
        await opened.inquiries.insertMany([{ inquiry: inquiry('INQ-WAITED'), fingerprint: 'fp-waited' }], tx);
      });
    } finally {
      clearInterval(ticking);
    }
    longestGapMs = Math.max(longestGapMs, performance.now() - last); // a loop held to the end ticked not once
    expect(await opened.inquiries.findByReference('INQ-WAITED')).toBeDefined();
    // SQLite's own busy handler sleeps on the event loop: it went 600 ms without a tick.
    expect(longestGapMs).toBeLessThan(300);
  });

  it('does not keep a database that is up to date from opening (no migration to run, no write lock needed)', async () => {
    const { database } = await stores.open();
    const path = database.config.kind === 'sqlite' ? database.config.path : '';
    // Another process holds the write lock past the 5 s a transaction waits for it (a long
    // `requeue --all`, a VACUUM): the service must still start on the file.
    const holder = new SQLite(path);
    holder.exec('begin immediate');
    try {
      const again = await openDatabase(database.config);
      await again.ping();
      await again.db.destroy();
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  });
});

// The inbox's queries on 100,000 inquiries (docs/benchmarks.md, "The inbox"): the list's first page,
// a page deep in it, searches for a rare and a common word, filters, the overview's counts, each the
// median of several runs, on SQLite and on PostgreSQL (a fresh database each, dropped after).
// Run: node --import tsx bench/inbox.ts [--postgres]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../src/config.js';
import { inboxQuery, parseListRequest } from '../src/inbox/query.js';
import { openDatabase } from '../src/storage/database.js';
import { createInboxStore } from '../src/storage/inbox-store.js';
import type { InboxQuery } from '../src/storage/ports-inbox.js';

const ROWS = Number(process.env.BENCH_INBOX_ROWS ?? 100_000);
const RUNS = 7;
const CHUNK = 1_000;
const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Tim', 'Frances', 'John'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee'];
const WORDS =
  'website shop brand app redesign launch budget deadline mobile identity campaign booking platform migration accessibility'.split(' ');
const DAY_MS = 86_400_000;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The query of an inbox address (as the page reads it). */
const query = (search: string): InboxQuery => {
  const parsed = parseListRequest(Object.fromEntries(new URLSearchParams(search)));
  if ('problem' in parsed) throw new Error(parsed.problem);
  return inboxQuery(parsed);
};

function row(i: number, now: number) {
  const pick = <T>(list: readonly T[], n: number) => list[n % list.length] as T;
  const words = Array.from({ length: 30 }, (_, k) => pick(WORDS, i * 7 + k * 13));
  return {
    reference: `INQ-${Array.from({ length: 6 }, (_, k) => CROCKFORD[Math.floor(i / 32 ** (5 - k)) % 32]).join('')}`,
    first_name: pick(FIRST, i),
    last_name: pick(LAST, i * 3),
    email: `person${i}@example${i % 500}.com`,
    company: i % 3 === 0 ? null : `Company ${i % 2000}`,
    // One in 10,000 mentions a rare word.
    message: `${words.join(' ')}${i % 10_000 === 0 ? ' zeppelin' : ''}`,
    client_id: null,
    fingerprint: `f${i}`,
    received_at: now - Math.floor((i * 90 * DAY_MS) / ROWS),
    verdict: i % 20 === 0 ? ('spam' as const) : ('inbox' as const),
    spam_score: 0,
    spam_reasons: '[]',
    body_hash: null,
    source: pick(['page', 'api', 'mcp', null] as const, i),
  };
}

async function bench(name: string, config: DatabaseConfig): Promise<string[]> {
  const opened = await openDatabase(config);
  const inbox = createInboxStore(opened);
  const now = Date.now();
  const started = performance.now();
  for (let start = 0; start < ROWS; start += CHUNK) {
    const rows = Array.from({ length: Math.min(CHUNK, ROWS - start) }, (_, k) => row(start + k, now));
    await opened.db.insertInto('inquiries').values(rows).execute();
  }
  // PostgreSQL's autovacuum analyses a table this changed; the bench does not wait for it.
  if (config.kind === 'postgres') await sql`analyze inquiries`.execute(opened.db);
  process.stderr.write(`${name}: ${ROWS} inquiries inserted in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const middle = row(Math.floor(ROWS / 2), now);
  const cases: [string, () => Promise<unknown>][] = [
    ['first page (inbox, 50)', () => inbox.list(query(''))],
    [
      'page after the 50,000th',
      () => inbox.list({ ...query(''), after: { receivedAt: new Date(middle.received_at), reference: middle.reference } }),
    ],
    ['status spam', () => inbox.list(query('status=spam'))],
    ['source mcp', () => inbox.list(query('source=mcp&status=all'))],
    ['search a rare word (10 hits)', () => inbox.list(query('q=zeppelin&status=all'))],
    ['search a common word (every row)', () => inbox.list(query('q=website&status=all'))],
    ['search a name and a prefix', () => inbox.list(query('q=grace+hop&status=all'))],
    ['search an address', () => inbox.list(query(`q=person${ROWS - 7}%40example&status=all`))],
    ['overview: 90 days by source', () => inbox.countPerDay(new Date(now - 90 * DAY_MS))],
  ];
  const lines: string[] = [];
  for (const [label, run] of cases) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    lines.push(
      `| ${name} | ${label} | ${(times[Math.floor(RUNS / 2)] as number).toFixed(1)} | ${(times[RUNS - 1] as number).toFixed(1)} |`,
    );
  }
  await opened.db.destroy();
  return lines;
}

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const lines = ['| database | query | median ms | slowest ms |', '|---|---|---:|---:|'];
const dir = mkdtempSync(join(tmpdir(), 'inbox-bench-'));
try {
  lines.push(...(await bench('SQLite', { kind: 'sqlite', path: join(dir, 'studio.db') })));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (process.argv.includes('--postgres')) {
  const name = `inbox_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  try {
    lines.push(...(await bench('PostgreSQL', { kind: 'postgres', url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`) })));
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);

// The inbox's store on each backend: links taken once and only in time, sessions, the purge, the
// listing's filters, search and keyset pages, the agent's name, states, counts per day, and the
// search index following inquiries that are deleted.

import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseRetention } from '../../src/config/retention.js';
import type { DatabaseConfig } from '../../src/config.js';
import { createAccess, LINK_TTL_MS, LINKS_PER_ADDRESS, SESSION_IDLE_MS, SESSION_MAX_MS } from '../../src/inbox/access.js';
import { createMaintenance } from '../../src/maintenance.js';
import { erasePerson } from '../../src/personal-data/erase.js';
import type { OpenDatabase } from '../../src/storage/handle.js';
import { createInboxStore } from '../../src/storage/inbox-store.js';
import type { InquiryRecord, Store } from '../../src/storage/ports.js';
import type { InboxStore } from '../../src/storage/ports-inbox.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { agentClient, inquiry } from '../helpers/store-fixtures.js';

/** Whether the SQLite file or its write-ahead log holds `word`. */
const inFiles = (path: string, word: string) =>
  [path, `${path}-wal`].some((file) => existsSync(file) && readFileSync(file).includes(Buffer.from(word)));

const T0 = new Date('2026-11-20T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let inbox: InboxStore;
  let database: OpenDatabase & { config: DatabaseConfig };
  async function open() {
    const { store: opened, opened: handle, database: fresh } = await stores.open();
    store = opened;
    database = { ...handle, config: fresh.config };
    inbox = createInboxStore(handle);
  }
  const insert = (...records: InquiryRecord[]) =>
    store.inquiries.insertMany(records.map((record) => ({ inquiry: record, fingerprint: record.reference })));
  const references = async (query: Parameters<InboxStore['list']>[0]) => (await inbox.list(query)).map((entry) => entry.inquiry.reference);

  it('takes a link once and only before it expires, and purges expired links and ended sessions', async () => {
    await open();
    await inbox.insertLink({ tokenHash: 'h1', email: 'a@example.com', createdAt: T0, expiresAt: at(LINK_TTL_MS) });
    await inbox.insertLink({ tokenHash: 'h2', email: 'a@example.com', createdAt: T0, expiresAt: at(LINK_TTL_MS) });
    expect(await inbox.countLinksSince('a@example.com', T0)).toBe(2);
    expect(await inbox.countLinksSince('a@example.com', at(1))).toBe(0);
    expect(await Promise.all([inbox.takeLink('h1', T0), inbox.takeLink('h1', T0)])).toEqual(
      expect.arrayContaining(['a@example.com', undefined]),
    );
    expect(await inbox.takeLink('h2', at(LINK_TTL_MS))).toBeUndefined();
    const session = { email: 'a@example.com', csrfToken: 'c', createdAt: T0, seenAt: T0, expiresAt: at(SESSION_MAX_MS) };
    await inbox.insertSession({ ...session, idHash: 's1' });
    await inbox.insertSession({ ...session, idHash: 's2', seenAt: at(SESSION_IDLE_MS) });
    await inbox.insertLink({ tokenHash: 'h3', email: 'a@example.com', createdAt: T0, expiresAt: at(LINK_TTL_MS) });
    expect(await inbox.purgeExpired(at(LINK_TTL_MS), at(1))).toBe(2); // h3, and s1 idle since T0
    expect(await inbox.findSession('s1')).toBeUndefined();
    expect(await inbox.findSession('s2')).toMatchObject({ email: 'a@example.com', csrfToken: 'c', seenAt: at(SESSION_IDLE_MS) });
    expect(await inbox.deleteAllSessions()).toBe(1);
  });

  it('lists newest first by status, source and search words, a page after another', async () => {
    await open();
    const day = (n: number) => at(n * 60_000);
    await insert(
      { ...inquiry('INQ-AAAAA1', day(1)), firstName: 'Grace', message: 'Compilers and cobol' },
      { ...inquiry('INQ-AAAAA2', day(2)), company: 'Café Zoë', source: 'page' },
      { ...inquiry('INQ-AAAAA3', day(3)), source: null, email: 'x@navy.example' },
      { ...inquiry('INQ-AAAAA4', day(3)), source: 'mcp' },
    );
    await store.inquiries.setVerdict('INQ-AAAAA4', 'spam', [], day(4));
    expect(await inbox.setState('INQ-AAAAA1', 'archived')).toBe(true);
    expect(await inbox.setState('INQ-NOSUCH', 'read')).toBe(false);
    await inbox.setState('INQ-AAAAA2', 'read');
    expect(await references({ status: 'all', limit: 10 })).toEqual(['INQ-AAAAA3', 'INQ-AAAAA4', 'INQ-AAAAA2', 'INQ-AAAAA1']);
    expect(await references({ status: 'inbox', limit: 10 })).toEqual(['INQ-AAAAA3', 'INQ-AAAAA2']);
    expect(await references({ status: 'archived', limit: 10 })).toEqual(['INQ-AAAAA1']);
    expect(await references({ status: 'spam', limit: 10 })).toEqual(['INQ-AAAAA4']);
    expect((await inbox.list({ status: 'spam', limit: 1 }))[0]?.status).toBe('spam');
    expect(await references({ status: 'all', source: 'unknown', limit: 10 })).toEqual(['INQ-AAAAA3']);
    expect(await references({ status: 'all', source: 'page', limit: 10 })).toEqual(['INQ-AAAAA2']);
    expect(await references({ status: 'all', words: ['cobol'], limit: 10 })).toEqual(['INQ-AAAAA1']);
    expect(await references({ status: 'all', words: ['caf', 'zo'], limit: 10 })).toEqual(['INQ-AAAAA2']);
    expect(await references({ status: 'all', words: ['navy', 'example'], limit: 10 })).toEqual(['INQ-AAAAA3']);
    expect(await references({ status: 'all', words: ['grace', 'nobody'], limit: 10 })).toEqual([]);
    const first = await inbox.list({ status: 'all', limit: 2 });
    const after = first.at(-1)?.inquiry;
    expect(await references({ status: 'all', limit: 2, ...(after && { after }) })).toEqual(['INQ-AAAAA2', 'INQ-AAAAA1']);
  });

  it('names the agent that sent an inquiry, and gives one inquiry with its judgement and deliveries', async () => {
    await open();
    await store.auth.createClient(agentClient('client-1', { clientName: 'Travel Agent', createdAt: T0 }));
    await insert({ ...inquiry('INQ-AAAAB1', T0), clientId: 'client-1', source: 'mcp' });
    await store.outbox.enqueue(['INQ-AAAAB1'], ['email'], T0);
    const found = await inbox.find('INQ-AAAAB1');
    expect(found).toMatchObject({ agentName: 'Travel Agent', agentVerifiedEmail: null, status: 'new', judgement: { verdict: 'inbox' } });
    expect(found?.deliveries.map((delivery) => delivery.channel)).toEqual(['email']);
    expect(await inbox.find('INQ-NOSUCH')).toBeUndefined();
  });

  it("says whose address an agent's person proved, and not one still pending", async () => {
    await open();
    const proved = { registrationType: 'verified_email', createdAt: T0, email: 'ada@example.com' } as const;
    await store.auth.createClient(agentClient('c-proved', proved));
    await store.auth.createClient(agentClient('c-pending', { ...proved, status: 'pending', email: 'eve@example.com' }));
    await insert({ ...inquiry('INQ-AAAAC1', T0), clientId: 'c-proved', source: 'mcp' });
    await insert({ ...inquiry('INQ-AAAAC2', T0), clientId: 'c-pending', source: 'mcp' });
    expect((await inbox.find('INQ-AAAAC1'))?.agentVerifiedEmail).toBe('ada@example.com');
    expect((await inbox.find('INQ-AAAAC2'))?.agentVerifiedEmail).toBeNull();
  });

  it('counts inquiries per UTC day and source', async () => {
    await open();
    await insert(
      inquiry('INQ-AAAAC1', new Date('2026-11-19T23:59:59.999Z')),
      inquiry('INQ-AAAAC2', new Date('2026-11-20T00:00:00.000Z')),
      { ...inquiry('INQ-AAAAC3', new Date('2026-11-20T12:00:00.000Z')), source: 'page' },
      inquiry('INQ-AAAAC4', new Date('2026-11-20T13:00:00.000Z')),
    );
    const counts = await inbox.countPerDay(new Date('2026-11-20T00:00:00.000Z'));
    expect(counts).toHaveLength(2);
    expect(counts).toEqual(
      expect.arrayContaining([
        { day: '2026-11-20', source: 'api', count: 2 },
        { day: '2026-11-20', source: 'page', count: 1 },
      ]),
    );
  });

  it('finds no deleted inquiry by search, and indexes those inserted after', async () => {
    await open();
    await insert({ ...inquiry('INQ-AAAAD1', T0), lastName: 'Zebedee' });
    expect(await references({ status: 'all', words: ['zebedee'], limit: 5 })).toEqual(['INQ-AAAAD1']);
    await store.retention.deleteInquiries('inbox', at(1), 10);
    expect(await references({ status: 'all', words: ['zebedee'], limit: 5 })).toEqual([]);
    await insert({ ...inquiry('INQ-AAAAD2', T0), lastName: 'Zebedee' });
    expect(await references({ status: 'all', words: ['zebedee'], limit: 5 })).toEqual(['INQ-AAAAD2']);
  });

  it("keeps none of an erased person's words in the search index", async () => {
    await open();
    await insert({ ...inquiry('INQ-AAAAE1', T0), lastName: 'Quixotically', email: 'q@example.com' }, inquiry('INQ-AAAAE2', T0));
    const { createPersonalDataStore } = await import('../../src/storage/personal-data-store.js');
    const personal = createPersonalDataStore(database);
    const outcome = await erasePerson(personal, { email: 'q@example.com', recipient: 'q@example.com' }, { waitMs: 0 });
    expect('erased' in outcome).toBe(true);
    expect(await references({ status: 'all', words: ['quixotically'], limit: 5 })).toEqual([]);
    if (database.dialect === 'sqlite') expect(inFiles((database.config as { path: string }).path, 'quixotically')).toBe(false);
  });

  it('keeps none of the words of inquiries retention deleted, once the maintenance has run', async () => {
    await open();
    const old = new Date(Date.now() - 400 * 86_400_000);
    await insert({ ...inquiry('INQ-AAAAF1', old), lastName: 'Perspicacious' }, inquiry('INQ-AAAAF2'));
    const maintenance = createMaintenance({
      store,
      inbox,
      retention: parseRetention('365d', '30d'),
      now: () => new Date(),
      logger: { info: () => {}, debug: () => {}, warn: () => {} },
    });
    expect((await maintenance.run()).inquiries).toBe(1);
    expect(await references({ status: 'all', words: ['perspicacious'], limit: 5 })).toEqual([]);
    if (database.dialect === 'sqlite') {
      // As once SQLite checkpoints the log by itself: what is left is in the file.
      const { path } = database.config as { path: string };
      await sql`pragma wal_checkpoint(truncate)`.execute(database.db);
      expect(inFiles(path, 'perspicacious')).toBe(false);
    }
  });

  it('signs in by link once, within its time, and ends sessions idle or too old', async () => {
    await open();
    let now = T0;
    const access = createAccess({
      store,
      inbox,
      users: ['studio@example.com'],
      emailChannel: 'email',
      studioName: 'Studio',
      signInUrl: 'https://studio.example/inbox/sign-in',
      linkKey: 'key',
      now: () => now,
    });
    for (let i = 0; i < LINKS_PER_ADDRESS; i++) expect(await access.requestLink('Studio@Example.com ')).toBe('queued');
    expect(await access.requestLink('studio@example.com')).toBe('ignored'); // the limit per address
    expect(await access.requestLink('other@example.com')).toBe('ignored');
    const messages = await store.outbox.countByStatus();
    expect(messages.pending).toBe(LINKS_PER_ADDRESS);
    const link = (await access.printableLink('studio@example.com')) as string;
    const token = new URL(link).searchParams.get('token') as string;
    now = at(LINK_TTL_MS);
    expect(await access.redeem(token)).toBeUndefined(); // expired
    now = T0;
    const late = new URL((await access.printableLink('studio@example.com')) as string).searchParams.get('token') as string;
    const session = await access.redeem(late);
    expect(session?.email).toBe('studio@example.com');
    expect(await access.redeem(late)).toBeUndefined();
    now = at(SESSION_IDLE_MS - 1);
    expect(await access.session(session?.id)).toBeDefined(); // used: idle from here again
    now = at(2 * SESSION_IDLE_MS - 2);
    expect(await access.session(session?.id)).toBeDefined();
    now = at(3 * SESSION_IDLE_MS);
    expect(await access.session(session?.id)).toBeUndefined();
    now = T0;
    const lasting = await access.redeem(
      new URL((await access.printableLink('studio@example.com')) as string).searchParams.get('token') as string,
    );
    for (now = T0; now.getTime() < at(SESSION_MAX_MS).getTime(); now = new Date(now.getTime() + SESSION_IDLE_MS - 1)) {
      expect(await access.session(lasting?.id)).toBeDefined();
    }
    expect(await access.session(lasting?.id)).toBeUndefined();
  });
});

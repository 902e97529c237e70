// One person's data on each backend: found by address in any case (and by mailbox for claim codes),
// erased whole in one transaction leaving everyone else's rows, refused while a delivery of theirs
// is being sent, harmless to a worker that still records one; on SQLite, gone from the files' bytes.
import { readFileSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { erasable, erasePerson } from '../../src/personal-data/erase.js';
import { dataSubject, senderOf } from '../../src/personal-data/subject.js';
import { openExistingDatabase } from '../../src/storage/database.js';
import type { OpenDatabase } from '../../src/storage/handle.js';
import type { DataSubject, PersonalDataStore } from '../../src/storage/personal-data-ports.js';
import { lowered } from '../../src/storage/personal-data-queries.js';
import { createPersonalDataStore } from '../../src/storage/personal-data-store.js';
import type { AttemptRecord, Store } from '../../src/storage/ports.js';
import type { Database } from '../../src/storage/schema.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { agentClient, inquiry } from '../helpers/store-fixtures.js';

const T0 = new Date('2026-03-01T10:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1_000);
const LEASE_MS = 60_000;
/** In the message of Ada's first inquiry, many times over: it fills overflow pages, not just a row. */
const ADA_SECRET = 'ada-secret-analytical-engine';

function subjectOf(address: string): DataSubject {
  const subject = dataSubject(address);
  if ('problem' in subject) throw new Error(subject.problem);
  return subject;
}

/** Ada writes from Gmail in two spellings of case; Bob is someone else. */
async function seed(store: Store): Promise<void> {
  await store.transaction(async (tx) => {
    await store.inquiries.insertMany(
      [
        {
          inquiry: { ...inquiry('INQ-AAAAA1', T0), email: 'Ada.Lovelace@Gmail.com', message: `${ADA_SECRET} `.repeat(400) },
          fingerprint: 'fp-a1',
        },
        {
          inquiry: { ...inquiry('INQ-AAAAA2', at(1)), email: 'ada.lovelace@GMAIL.COM', message: 'ada-second-brief' },
          fingerprint: 'fp-a2',
          judgement: { verdict: 'spam', score: 7, reasons: [{ code: 'spam_phrases', detail: 'a phrase' }] },
        },
        {
          inquiry: { ...inquiry('INQ-BBBBB1', T0), firstName: 'Bob', email: 'bob@example.com', message: 'bob-brief' },
          fingerprint: 'fp-b1',
        },
      ],
      tx,
    );
    await store.outbox.enqueue(['INQ-AAAAA1', 'INQ-BBBBB1'], ['email', 'webhook'], T0, tx);
    await store.idempotency.insertMany(
      [
        { key: 'key-ada', requestHash: 'h-ada', reference: 'INQ-AAAAA1', createdAt: T0, outcome: 'created' },
        { key: 'key-bob', requestHash: 'h-bob', reference: 'INQ-BBBBB1', createdAt: T0, outcome: 'created' },
      ],
      tx,
    );
    const verified = { registrationType: 'verified_email', createdAt: T0 } as const;
    await store.auth.createClient(agentClient('agt_ada', { ...verified, clientName: 'Ada agent', email: 'ADA.LOVELACE@gmail.com' }), tx);
    await store.auth.createClient(agentClient('agt_bob', { ...verified, clientName: 'Bob agent', email: 'bob@example.com' }), tx);
    await store.auth.createClient(agentClient('agt_open', { clientName: 'Unclaimed', createdAt: T0 }), tx);
    const claim = { otpHash: null, otpExpiresAt: null, failedAttempts: 0, expiresAt: at(3600), createdAt: T0 } as const;
    await store.auth.createClaim(
      { ...claim, tokenHash: 'claim-ada', clientId: 'agt_ada', status: 'claimed', email: 'Ada.Lovelace@Gmail.com' },
      tx,
    );
    // A claim of Ada's registration that someone else started: it goes with the registration.
    await store.auth.createClaim({ ...claim, tokenHash: 'claim-of-ada-agent', clientId: 'agt_ada', status: 'ended', email: null }, tx);
    // Ada started claiming an anonymous registration: her claim goes, the registration stays.
    await store.auth.createClaim(
      { ...claim, tokenHash: 'claim-ada-open', clientId: 'agt_open', status: 'initiated', email: 'ada.lovelace@gmail.com' },
      tx,
    );
    await store.auth.createClaim(
      { ...claim, tokenHash: 'claim-bob', clientId: 'agt_bob', status: 'claimed', email: 'bob@example.com' },
      tx,
    );
    const send = { sentAt: T0, expiresAt: at(86_400) };
    // Recorded by mailbox: Gmail's dots and googlemail.com are Ada's too.
    await store.auth.recordCodeSend({ ...send, recipient: 'adalovelace@gmail.com', domain: 'gmail.com', tokenHash: 'claim-stranger' }, tx);
    await store.auth.recordCodeSend({ ...send, recipient: 'other@gmail.com', domain: 'gmail.com', tokenHash: 'claim-ada' }, tx);
    await store.auth.recordCodeSend({ ...send, recipient: 'bob@example.com', domain: 'example.com', tokenHash: 'claim-bob' }, tx);
    await store.outbox.enqueueMessage(
      { id: 'msg-ada', to: 'Ada.Lovelace@Gmail.com', subject: 'Your code', body: 'code 111111' },
      'email',
      T0,
      tx,
    );
    await store.outbox.enqueueMessage({ id: 'msg-bob', to: 'bob@example.com', subject: 'Your code', body: 'code 222222' }, 'email', T0, tx);
    const token = { clientId: 'mcp_host', resource: 'https://studio.example/mcp', scope: 'inquiry:write', status: 'active' } as const;
    await store.oauth.createRefreshToken({ ...token, tokenHash: 'rt-ada', grantId: 'agt_ada', expiresAt: at(86_400), createdAt: T0 }, tx);
    await store.oauth.createRefreshToken({ ...token, tokenHash: 'rt-bob', grantId: 'agt_bob', expiresAt: at(86_400), createdAt: T0 }, tx);
  });
  // OAuth sign-ins: one that made Ada's registration its grant, one of hers still waiting for its code, one of Bob's.
  const signIn = {
    clientId: 'mcp_host',
    redirectUri: 'http://127.0.0.1:1/cb',
    codeChallenge: 'c'.repeat(43),
    resource: 'https://studio.example/mcp',
    scope: 'inquiry:write',
    state: null,
    csrfHash: 'a'.repeat(64),
    otpHash: null,
    otpExpiresAt: null,
    failedAttempts: 0,
    codeHash: null,
    expiresAt: at(900),
    createdAt: T0,
  } as const;
  await store.oauth.createAuthorization({ ...signIn, id: 'az-ada', status: 'redeemed', email: null, grantId: 'agt_ada' });
  await store.oauth.createAuthorization({
    ...signIn,
    id: 'az-ada-2',
    status: 'code_sent',
    email: 'Ada.Lovelace@Gmail.com',
    grantId: null,
    createdAt: at(1),
  });
  await store.oauth.createAuthorization({ ...signIn, id: 'az-bob', status: 'redeemed', email: 'bob@example.com', grantId: 'agt_bob' });
}

/** Claims every due delivery and records an attempt of each: Ada's webhook fails with her address in the error. */
async function attemptAll(store: Store, when: Date): Promise<void> {
  const claimed = await store.outbox.claimDue(when, 100, LEASE_MS, 'worker-a');
  for (const { delivery } of claimed) {
    const failed = delivery.reference === 'INQ-AAAAA1' && delivery.channel === 'webhook';
    const record: AttemptRecord = {
      deliveryId: delivery.id,
      owner: 'worker-a',
      attempts: delivery.attempts,
      attempt: {
        attemptedAt: when,
        outcome: failed ? 'retry' : 'succeeded',
        error: failed ? 'refused Ada.Lovelace@Gmail.com' : null,
        durationMs: 5,
      },
      result: failed ? { outcome: 'retry', error: 'refused Ada.Lovelace@Gmail.com', runAt: at(30) } : { outcome: 'succeeded' },
    };
    expect(await store.outbox.recordAttempt(record)).toBe(true);
  }
}

const TABLES = [
  'inquiries',
  'deliveries',
  'delivery_attempts',
  'idempotency_keys',
  'messages',
  'agent_clients',
  'agent_claims',
  'claim_code_sends',
  'oauth_authorizations',
  'oauth_refresh_tokens',
] as const;

/** Rows per table, read straight from the database. */
async function rowCounts(db: Kysely<Database>): Promise<Record<(typeof TABLES)[number], number>> {
  const counts = Object.fromEntries(TABLES.map((table) => [table, 0])) as Record<(typeof TABLES)[number], number>;
  for (const table of TABLES) {
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(table)}`.execute(db);
    counts[table] = Number(rows[0]?.count);
  }
  return counts;
}

describe.each(BACKENDS)('personal data on $name', ({ name, fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let opened: OpenDatabase;
  let personal: PersonalDataStore;
  const ada = subjectOf('ADA.LOVELACE@gmail.com');
  const bob = subjectOf('bob@example.com');

  async function open(): Promise<void> {
    ({ store, opened } = await stores.open());
    personal = createPersonalDataStore(opened);
    await seed(store);
  }

  it('finds everything held about an address, in any case, and nothing of anyone else', async () => {
    await open();
    await attemptAll(store, at(2));
    const found = await personal.find(ada);
    expect(found.inquiries.map((held) => [held.reference, held.email, held.verdict])).toEqual([
      ['INQ-AAAAA1', 'Ada.Lovelace@Gmail.com', 'inbox'],
      ['INQ-AAAAA2', 'ada.lovelace@GMAIL.COM', 'spam'],
    ]);
    const [first, second] = found.inquiries;
    expect(second).toMatchObject({ spamScore: 7, reasons: [{ code: 'spam_phrases', detail: 'a phrase' }], deliveries: [] });
    expect(first?.idempotencyKeys).toEqual([{ key: 'key-ada', createdAt: T0, outcome: 'created' }]);
    expect(first?.deliveries.map((held) => [held.channel, held.status, held.history.map((attempt) => attempt.outcome)])).toEqual([
      ['email', 'succeeded', ['succeeded']],
      ['webhook', 'pending', ['retry']],
    ]);
    expect(first?.deliveries[1]?.history[0]?.error).toBe('refused Ada.Lovelace@Gmail.com');
    expect(found.agentRegistrations.map((client) => client.clientId)).toEqual(['agt_ada']);
    expect(found.agentClaims.map((claim) => [claim.clientId, claim.status]).sort()).toEqual([
      ['agt_ada', 'claimed'],
      ['agt_ada', 'ended'],
      ['agt_open', 'initiated'],
    ]);
    expect(found.serviceMails).toMatchObject([
      { id: 'msg-ada', to: 'Ada.Lovelace@Gmail.com', body: '', deliveries: [{ status: 'succeeded' }] },
    ]);
    expect(found.codesMailed.map((send) => send.recipient).sort()).toEqual(['adalovelace@gmail.com', 'other@gmail.com']);
    expect(found.signIns.map((held) => [held.status, held.grantId])).toEqual([
      ['redeemed', 'agt_ada'],
      ['code_sent', null],
    ]);
    expect(found.refreshTokens).toEqual([
      {
        grantId: 'agt_ada',
        clientId: 'mcp_host',
        resource: 'https://studio.example/mcp',
        scope: 'inquiry:write',
        status: 'active',
        expiresAt: at(86_400),
        createdAt: T0,
      },
    ]);
    const text = JSON.stringify(found);
    // Nobody else's, and no secret's hash (a refresh token's).
    for (const other of ['bob', 'INQ-BBBBB1', 'agt_bob', '222222', 'rt-']) expect(text).not.toContain(other);
    expect(await senderOf(personal, 'INQ-AAAAA2')).toEqual(ada);
    expect(await senderOf(personal, 'INQ-ZZZZZZ')).toBeUndefined();
  });

  it('erases it all in one transaction and leaves everyone else', async () => {
    await open();
    await attemptAll(store, at(2));
    const bobBefore = await personal.find(bob);
    const before = await rowCounts(opened.db);
    const planned = erasable(await personal.find(ada));

    const outcome = await erasePerson(personal, ada, { waitMs: 0, now: () => at(3) });
    if (!('erased' in outcome)) throw new Error('not erased');
    expect(outcome.erased).toEqual(planned);
    expect(outcome.erased).toEqual({
      inquiries: [
        { reference: 'INQ-AAAAA1', receivedAt: T0 },
        { reference: 'INQ-AAAAA2', receivedAt: at(1) },
      ],
      deliveries: 3,
      attempts: 3,
      idempotencyKeys: 1,
      agentRegistrations: ['agt_ada'],
      agentClaims: 3,
      serviceMails: 1,
      codesMailed: 2,
      signIns: 2,
      refreshTokens: 1,
    });
    expect(outcome.scrub).toEqual(name === 'SQLite' ? { dialect: 'sqlite', walEmptied: true } : { dialect: 'postgres' });
    expect(await personal.find(ada)).toEqual({
      inquiries: [],
      agentRegistrations: [],
      agentClaims: [],
      serviceMails: [],
      codesMailed: [],
      signIns: [],
      refreshTokens: [],
    });
    expect(await personal.find(bob)).toEqual(bobBefore);
    expect(await rowCounts(opened.db)).toEqual({
      inquiries: before.inquiries - 2,
      deliveries: before.deliveries - 3,
      delivery_attempts: before.delivery_attempts - 3,
      idempotency_keys: before.idempotency_keys - 1,
      messages: before.messages - 1,
      agent_clients: before.agent_clients - 1,
      agent_claims: before.agent_claims - 3,
      claim_code_sends: before.claim_code_sends - 2,
      oauth_authorizations: before.oauth_authorizations - 2,
      oauth_refresh_tokens: before.oauth_refresh_tokens - 1,
    });
    // The webhook's health no longer quotes her address as its last error.
    const health = await opened.db.selectFrom('delivery_successes').select(['channel', 'last_error']).orderBy('channel').execute();
    expect(health.find((row) => row.channel === 'webhook')?.last_error ?? null).toBeNull();
    // The erased registration's credentials name a client that is no longer there.
    expect(await store.auth.findClient('agt_ada')).toBeUndefined();
    expect(await store.auth.findClient('agt_open')).toMatchObject({ status: 'active' });
    // Bob's pending deliveries and his registration are as they were.
    expect(await store.outbox.forReference('INQ-BBBBB1')).toHaveLength(2);
  });

  it('erases the service mails whose text names the person (a quarantine digest), and never exports them', async () => {
    await open();
    const digest = (id: string, body: string) => ({
      id,
      to_address: 'studio@example.com',
      subject: 'Quarantine digest',
      body,
      created_at: T0.getTime(),
    });
    await opened.db
      .insertInto('messages')
      .values([
        digest('msg-names-ada', 'Ada Lovelace <Ada.Lovelace@Gmail.com>\nSEO offer…\nRelease: studio-inquiry release INQ-AAAAA9'),
        digest('msg-names-other', 'Adax Lovelace <adaxlovelace@gmail.com>: another person'),
      ])
      .execute();
    expect((await personal.find(ada)).serviceMails.map((mail) => mail.id)).not.toContain('msg-names-ada');
    const outcome = await erasePerson(personal, ada, { waitMs: 0, now: () => at(3) });
    if (!('erased' in outcome)) throw new Error('not erased');
    expect(outcome.erased.serviceMails).toBe(2); // the code mailed to her, and the digest naming her
    const left = await opened.db.selectFrom('messages').select('id').where('id', 'like', 'msg-names-%').execute();
    expect(left.map((row) => row.id)).toEqual(['msg-names-other']);
  });

  it('erases nothing while a delivery of the person is being sent, and all of it once the lease is let go', async () => {
    await open();
    const claimed = await store.outbox.claimDue(at(2), 100, LEASE_MS, 'worker-a');
    const adaEmail = claimed.find(({ delivery }) => delivery.reference === 'INQ-AAAAA1' && delivery.channel === 'email');
    if (!adaEmail) throw new Error('not claimed');
    const before = await rowCounts(opened.db);

    const refused = await personal.erase(ada, at(3));
    expect('inFlight' in refused && refused.inFlight.map((delivery) => delivery.reference)).toEqual(['INQ-AAAAA1', 'INQ-AAAAA1', null]);
    expect(await rowCounts(opened.db)).toEqual(before);
    // Waiting gives up after its time, nothing erased.
    const waited: unknown[] = [];
    let clock = at(3).getTime();
    const gaveUp = await erasePerson(personal, ada, {
      waitMs: 30,
      pollMs: 1,
      now: () => {
        clock += 10;
        return new Date(clock);
      },
      onWaiting: (inFlight) => waited.push(inFlight),
    });
    expect('inFlight' in gaveUp).toBe(true);
    expect(waited).toHaveLength(1);

    // The worker records its attempts (the lease is let go): the erase goes through.
    for (const { delivery } of claimed) {
      await store.outbox.recordAttempt({
        deliveryId: delivery.id,
        owner: 'worker-a',
        attempts: delivery.attempts,
        attempt: { attemptedAt: at(3), outcome: 'succeeded', error: null, durationMs: 5 },
        result: { outcome: 'succeeded' },
      });
    }
    const outcome = await erasePerson(personal, ada, { waitMs: 0, now: () => at(4) });
    expect('erased' in outcome && outcome.erased.deliveries).toBe(3);
  });

  it('lets a worker whose lease ran out find its erased delivery gone: nothing recorded, renewed or brought back', async () => {
    await open();
    const claimed = await store.outbox.claimDue(at(2), 100, LEASE_MS, 'worker-a');
    const adaEmail = claimed.find(({ delivery }) => delivery.reference === 'INQ-AAAAA1' && delivery.channel === 'email')?.delivery;
    const bobEmail = claimed.find(({ delivery }) => delivery.reference === 'INQ-BBBBB1' && delivery.channel === 'email')?.delivery;
    if (!adaEmail || !bobEmail) throw new Error('not claimed');
    // The worker hung past its lease; the erase finds nothing in flight.
    const erased = await personal.erase(ada, at(2 + LEASE_MS / 1000 + 1));
    expect('erased' in erased).toBe(true);

    const record = (delivery: typeof adaEmail): AttemptRecord => ({
      deliveryId: delivery.id,
      owner: 'worker-a',
      attempts: delivery.attempts,
      attempt: { attemptedAt: at(70), outcome: 'succeeded', error: null, durationMs: 5 },
      result: { outcome: 'succeeded' },
    });
    expect(await store.transaction((tx) => store.outbox.recordAttempts([record(adaEmail), record(bobEmail)], tx))).toEqual([false, true]);
    expect(await store.outbox.renewLeases([adaEmail.id], 'worker-a', at(200))).toEqual([]);
    await store.outbox.releaseClaims([adaEmail.id], 'worker-a');
    const attempts = await opened.db.selectFrom('delivery_attempts').select('delivery_id').execute();
    expect(attempts.map((row) => row.delivery_id)).toEqual([bobEmail.id]);
    expect(await personal.find(ada)).toMatchObject({ inquiries: [], serviceMails: [] });
    // Nothing of Ada's is ever claimed again.
    const later = await store.outbox.claimDue(at(1_000), 100, LEASE_MS, 'worker-b');
    expect(later.every(({ delivery }) => delivery.reference !== 'INQ-AAAAA1')).toBe(true);
  });

  it('looks addresses up through the index on lower(address)', async () => {
    await open();
    // The expression as the store writes it (personal-data-queries.ts), planned with the address inlined.
    const probe = opened.db.selectFrom('inquiries').select('reference').where(lowered('email'), '=', ada.email).compile();
    if (name === 'SQLite') {
      const { rows } = await sql
        .raw<{ detail: string }>(`explain query plan ${probe.sql.replace('?', `'${ada.email}'`)}`)
        .execute(opened.db);
      expect(rows.map((row) => row.detail).join('\n')).toContain('USING INDEX inquiries_email_lower');
    } else {
      await opened.db.connection().execute(async (connection) => {
        await sql`set enable_seqscan = off`.execute(connection);
        const { rows } = await sql
          .raw<{ 'QUERY PLAN': string }>(`explain ${probe.sql.replace('$1', `'${ada.email}'`)}`)
          .execute(connection);
        expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('inquiries_email_lower');
        await sql`reset enable_seqscan`.execute(connection);
      });
    }
  });
});

describe('the SQLite files after an erase', () => {
  const stores = storePerTest(BACKENDS[0].fresh);

  /** Which of `needles` the database file and its write-ahead log hold, as UTF-8 bytes. */
  function foundInFiles(path: string, needles: readonly string[]): string[] {
    const files = [path, `${path}-wal`].map((file) => {
      try {
        return readFileSync(file);
      } catch {
        return Buffer.alloc(0);
      }
    });
    return needles.filter((needle) => files.some((bytes) => bytes.includes(Buffer.from(needle, 'utf8'))));
  }

  it('hold none of the person once the write-ahead log is emptied, and say when a reader kept it', async () => {
    const { store, opened, database } = await stores.open();
    if (database.config.kind !== 'sqlite') throw new Error('SQLite expected');
    const path = database.config.path;
    // Every connection overwrites what it deletes: the service's (openDatabase) and the CLI's (openExistingDatabase).
    const cli = await openExistingDatabase(database.config);
    for (const connection of [opened.db, cli.db]) {
      expect((await sql<{ secure_delete: number }>`pragma secure_delete`.execute(connection)).rows).toEqual([{ secure_delete: 1 }]);
    }
    await cli.db.destroy();
    const personal = createPersonalDataStore(opened);
    await seed(store);
    await attemptAll(store, at(2));
    const needles = [
      ADA_SECRET,
      'ada-second-brief',
      'Ada.Lovelace@Gmail.com',
      'ada.lovelace@gmail.com',
      'adalovelace@gmail.com',
      'ADA.LOVELACE',
    ];
    // Seen before: the search reads what is there.
    expect(foundInFiles(path, needles)).toEqual(needles);

    const ada = subjectOf('ada.lovelace@gmail.com');
    // A reader holding a snapshot keeps the log from being emptied: said, and the next try succeeds.
    const reader = new SQLite(path, { readonly: true });
    try {
      reader.prepare('begin').run();
      reader.prepare('select count(*) from inquiries').get();
      const outcome = await erasePerson(personal, ada, { waitMs: 0 });
      expect('erased' in outcome && outcome.scrub).toEqual({ dialect: 'sqlite', walEmptied: false });
      reader.prepare('commit').run();
    } finally {
      reader.close();
    }
    expect(await personal.scrub()).toEqual({ dialect: 'sqlite', walEmptied: true });
    expect(foundInFiles(path, needles)).toEqual([]);
    expect(foundInFiles(path, ['bob-brief', 'bob@example.com'])).toEqual(['bob-brief', 'bob@example.com']);
  }, 20_000);
});

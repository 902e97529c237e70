// Races on agent auth, run for real on each database: parallel requests against the app, and two
// instances on one database. A spy that waits holds each race window open, so that every run takes
// the racy interleaving instead of depending on timing luck.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { withCodes } from '../../src/auth/claim-code-mail.js';
import { hashClaimToken, OTP_DIGITS, OTP_MAX_FAILED_ATTEMPTS } from '../../src/auth/claims.js';
import { openDatabase } from '../../src/storage/database.js';
import type { AgentClient, Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { BACKENDS, type FreshDatabase, postgresAdmin } from '../helpers/databases.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';
import { takeBackBefore } from '../helpers/older-release.js';

const PUBLIC_URL = 'https://studio.example';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

let idp: IdJagIssuer;
beforeAll(async () => {
  idp = await startIdJagIssuer();
});
afterAll(async () => {
  await idp.close();
});

/** Resolves once `count` parties have called `arrive`: each waits there for all the others. */
function barrier(count: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    /** Resolves once all `count` parties have come. */
    opened,
    /** False once `count` parties have come: later callers are not held. */
    get waiting() {
      return arrived < count;
    },
    async arrive(): Promise<void> {
      arrived += 1;
      if (arrived === count) open();
      await opened;
    },
  };
}

/**
 * Holds the store's next `count` transactions before they begin: `reached` once all of them are
 * held, until `release()`. Later transactions run as usual.
 */
function holdTransactions(store: Store, count = 1): { reached: Promise<void>; release: () => void } {
  const transaction = store.transaction.bind(store);
  const all = barrier(count);
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  vi.spyOn(store, 'transaction').mockImplementation(async (work, options) => {
    if (all.waiting) {
      void all.arrive();
      await released;
    }
    return transaction(work, options);
  });
  return { reached: all.opened, release };
}

/**
 * Codes mailed by the app, read from the outbox as they are queued (the worker is not running) and
 * put into their mail as the email channel does, with the key the instances share.
 */
async function mailedCodes(app: TestApp): Promise<(to: string) => string[]> {
  const key = await app.services.store.proofs.secret('claim-code-key', 'never stored: the app made the key');
  const enqueued = vi.spyOn(app.services.store.outbox, 'enqueueMessage');
  return (to) =>
    enqueued.mock.calls
      .filter(([message]) => message.to === to)
      .map(([message]) => /\b(\d{6})\b/.exec(withCodes(message.body, key, OTP_DIGITS))?.[1] ?? '');
}

describe.each(BACKENDS)('agent auth races on $name', ({ fresh }) => {
  let database: FreshDatabase | undefined;
  const apps: TestApp[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const app of apps.splice(0)) await app.close();
    await database?.drop();
    database = undefined;
  });

  /**
   * `count` instances of the service on one fresh database; on PostgreSQL with `serializable`, one
   * whose default transaction isolation is serializable (set on the database, as an operator might).
   */
  async function startInstances(count: number, { serializable = false } = {}): Promise<TestApp[]> {
    database = await fresh();
    if (serializable && database.config.kind === 'postgres') {
      const name = new URL(database.url).pathname.slice(1);
      await postgresAdmin(`ALTER DATABASE ${name} SET default_transaction_isolation = 'serializable'`);
    }
    const env = {
      DATABASE_URL: database.url,
      PUBLIC_URL,
      SMTP_URL: 'smtp://127.0.0.1:2525',
      INQUIRY_TO: 'studio@example.com',
      TRUSTED_ISSUERS: JSON.stringify({ [idp.issuer]: idp.jwksUrl }),
    };
    // One after the other: the first migrates the new database.
    for (let i = 0; i < count; i++) apps.push(await startTestApp({ env, startWorker: false }));
    return apps;
  }

  const post = (app: TestApp, url: string, payload: Record<string, unknown>) => app.app.inject({ method: 'POST', url, payload });

  async function registerAnonymous(app: TestApp): Promise<{ client_id: string; claim_token: string }> {
    const response = await post(app, '/agent/register', { type: 'anonymous', client_name: 'Raced agent' });
    expect(response.statusCode).toBe(201);
    return response.json();
  }

  /** One instance, and an anonymous registration whose claim by owner@example.com has started: its code mailed. */
  async function startedClaim(options?: { serializable?: boolean }) {
    const [app] = (await startInstances(1, options)) as [TestApp];
    const codesTo = await mailedCodes(app);
    const { client_id, claim_token } = await registerAnonymous(app);
    expect((await post(app, '/agent/claim', { claim_token, email: 'owner@example.com' })).statusCode).toBe(202);
    const [code] = codesTo('owner@example.com');
    return { app, codesTo, client_id, claim_token, code };
  }

  it('a start racing a completing claim leaves the claimed registration with its owner (409 previously_claimed)', async () => {
    const { app, codesTo, client_id, claim_token, code } = await startedClaim();

    // The second start has checked the claim and hashed its code; it is held just before it writes,
    // while the first code completes the claim.
    const store = app.services.store;
    const held = holdTransactions(store);
    const restart = post(app, '/agent/claim', { claim_token, email: 'intruder@example.com' });
    await held.reached;
    const completed = await post(app, '/agent/claim', { claim_token, otp: code });
    expect(completed.statusCode).toBe(200);
    held.release();

    const restarted = await restart;
    expect(restarted.statusCode).toBe(409);
    expect(restarted.json()).toMatchObject({ error: 'previously_claimed' });
    expect(codesTo('intruder@example.com')).toEqual([]);
    expect((await store.auth.findClaim(hashClaimToken(claim_token)))?.status).toBe('claimed');
    expect((await store.auth.findClient(client_id))?.email).toBe('owner@example.com');
  });

  it('one code redeemed by more requests at once than a claim has tries claims once; every other gets 409 previously_claimed', async () => {
    // On PostgreSQL, the database's default isolation is serializable: the service's transactions
    // ask for read committed, so those waiting for the claim's row take their turn instead of failing.
    const { app, client_id, claim_token, code } = await startedClaim({ serializable: true });

    // Every request has checked the claim and hashed the code before any of them begins its
    // transaction. None of them is a wrong code, so none may be refused as one, nor find the claim
    // ended after too many tries.
    const tries = OTP_MAX_FAILED_ATTEMPTS + 3;
    const held = holdTransactions(app.services.store, tries);
    const requests = Array.from({ length: tries }, () => post(app, '/agent/claim', { claim_token, otp: code }));
    const answeredEarly = Promise.race(requests).then((response) => {
      throw new Error(`a request was answered (${response.statusCode}) before every one had reached its transaction`);
    });
    await Promise.race([held.reached, answeredEarly]);
    held.release();
    const responses = await Promise.all(requests);

    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, ...Array(tries - 1).fill(409)]);
    const bodies = responses.map((response) => response.json() as Record<string, unknown>);
    expect(bodies.filter((body) => body.identity_assertion !== undefined)).toHaveLength(1);
    for (const body of bodies.filter((body) => body.status !== 'claimed')) expect(body).toMatchObject({ error: 'previously_claimed' });
    expect((await app.services.store.auth.findClaim(hashClaimToken(claim_token)))?.status).toBe('claimed');
    expect((await app.services.store.auth.findClient(client_id))?.email).toBe('owner@example.com');
  });

  it('a code replaced by a start while it was being checked is refused as replaced, and the newer code claims', async () => {
    const { app, codesTo, claim_token, code } = await startedClaim();

    // The completion has read the claim and hashed its code; it is held before its transaction while
    // a start mails a new code.
    const held = holdTransactions(app.services.store);
    const completion = post(app, '/agent/claim', { claim_token, otp: code });
    await held.reached;
    expect((await post(app, '/agent/claim', { claim_token, email: 'owner@example.com' })).statusCode).toBe(202);
    const newer = codesTo('owner@example.com').at(-1) as string;
    held.release();

    const refused = await completion;
    // One time in a million the new code is the old one, which then claims.
    if (newer === code) return expect(refused.statusCode).toBe(200);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: 'otp_invalid', detail: expect.stringContaining('a newer code has been sent') });
    expect((await post(app, '/agent/claim', { claim_token, otp: newer })).statusCode).toBe(200);
  });

  it('a registration revoked while its right code was being checked stays revoked, and its claim unclaimed (410)', async () => {
    const { app, client_id, claim_token, code } = await startedClaim();
    const store = app.services.store;

    const held = holdTransactions(store);
    const completion = post(app, '/agent/claim', { claim_token, otp: code });
    await held.reached;
    await store.auth.revokeClient(client_id, new Date());
    held.release();

    const refused = await completion;
    expect(refused.statusCode).toBe(410);
    expect(refused.json()).toMatchObject({ error: 'claim_expired', detail: 'the registration has been revoked' });
    expect(refused.json()).not.toHaveProperty('identity_assertion');
    expect((await store.auth.findClient(client_id))?.status).toBe('revoked');
    expect((await store.auth.findClaim(hashClaimToken(claim_token)))?.status).toBe('initiated');
  });

  it('two instances registering the same ID-JAG subject at once keep one client for it', async () => {
    const instances = await startInstances(2);
    // Each registration has looked for the subject's client, and found none, before either inserts.
    const bothLooked = barrier(2);
    for (const app of instances) {
      const auth = app.services.store.auth;
      const findClientBySubject = auth.findClientBySubject.bind(auth);
      vi.spyOn(auth, 'findClientBySubject').mockImplementation(async (issuer, subject) => {
        const found = await findClientBySubject(issuer, subject);
        if (bothLooked.waiting) await bothLooked.arrive();
        return found;
      });
    }
    const register = async (app: TestApp) =>
      post(app, '/agent/register', {
        type: 'identity_assertion',
        assertion_type: ID_JAG,
        assertion: await idp.sign(PUBLIC_URL, { sub: 'raced-person' }),
      });
    const responses = await Promise.all(instances.map(register));

    expect(responses.map((response) => response.statusCode)).toEqual([201, 201]);
    const clientIds = responses.map((response) => (response.json() as { client_id: string }).client_id);
    expect(new Set(clientIds).size).toBe(1);
    // And so does every later registration of that person, on either instance.
    const later = await register(instances[1] as TestApp);
    expect((later.json() as { client_id: string }).client_id).toBe(clientIds[0]);
  });
});

describe.each(BACKENDS)('upgrading a $name database with duplicate ID-JAG clients (migration 006)', ({ fresh }) => {
  let database: FreshDatabase | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await database?.drop();
    store = undefined;
    database = undefined;
  });

  const client = (clientId: string, subject: string | null, createdAt: number, status = 'active') => ({
    client_id: clientId,
    client_name: clientId,
    client_uri: null,
    registration_type: subject === null ? 'anonymous' : 'id-jag',
    status,
    email: null,
    subject,
    issuer: subject === null ? null : 'https://idp.example',
    created_at: createdAt,
    revoked_at: status === 'revoked' ? createdAt : null,
  });

  it('keeps the earliest active client of each person, revokes the later ones, and then refuses new duplicates', async () => {
    database = await fresh();
    // The database as an older release left it: migrated up to 005, with duplicates it wrote.
    const older = await openDatabase(database.config);
    await takeBackBefore(older.db, '006');
    await older.db
      .insertInto('agent_clients')
      .values([
        client('agt_a3', 'person-a', 3000),
        client('agt_a1', 'person-a', 1000),
        client('agt_a2', 'person-a', 2000),
        client('agt_b1', 'person-b', 1000, 'revoked'),
        client('agt_b2', 'person-b', 2000),
        client('agt_c2', 'person-c', 1000),
        client('agt_c1', 'person-c', 1000),
        client('agt_anon1', null, 1000),
        client('agt_anon2', null, 1000),
      ] as never)
      .execute();
    await older.db.destroy();

    store = createStore(await openDatabase(database.config));
    const statusOf = async (clientId: string) => (await store?.auth.findClient(clientId))?.status;
    const statuses = Object.fromEntries(
      await Promise.all(
        ['agt_a1', 'agt_a2', 'agt_a3', 'agt_b1', 'agt_b2', 'agt_c1', 'agt_c2', 'agt_anon1', 'agt_anon2'].map(
          async (id) => [id, await statusOf(id)] as const,
        ),
      ),
    );
    expect(statuses).toEqual({
      agt_a1: 'active',
      agt_a2: 'revoked',
      agt_a3: 'revoked',
      agt_b1: 'revoked',
      agt_b2: 'active',
      agt_c1: 'active', // of two made in the same millisecond, the lower client id
      agt_c2: 'revoked',
      agt_anon1: 'active',
      agt_anon2: 'active',
    });
    expect((await store.auth.findClientBySubject('https://idp.example', 'person-a'))?.clientId).toBe('agt_a1');

    const another: AgentClient = {
      clientId: 'agt_a4',
      clientName: 'again',
      clientUri: null,
      registrationType: 'id-jag',
      status: 'active',
      email: null,
      subject: 'person-a',
      issuer: 'https://idp.example',
      createdAt: new Date(4000),
    };
    expect(await store.auth.createClient(another)).toBe(false);
    expect(await store.auth.createClient({ ...another, subject: 'person-d' })).toBe(true);
  });
});

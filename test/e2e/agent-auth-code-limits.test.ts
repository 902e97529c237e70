// Limits on the claim codes mailed, on each database: per recipient (whoever asks, on any instance) and
// per claim. Each request comes from another client address, as an attacker's would, past the per-IP
// limits; the services' clock is the test's, so the windows pass without waiting.
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appDeps, buildApp } from '../../src/app.js';
import { hashClaimToken } from '../../src/auth/claims.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Database } from '../../src/storage/schema.js';
import { loadStudioProfile } from '../../src/studio/profile.js';
import { BACKENDS, type FreshDatabase, freshPostgres } from '../helpers/databases.js';

// The limits this test holds the service to (src/auth/limits.ts), written out: a test that read
// them from the code would pass whatever they were.
const PER_ADDRESS_PER_15_MIN = 3;
const PER_ADDRESS_PER_DAY = 10;
const PER_CLAIM_PER_DAY = 5;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const T0 = Date.parse('2026-05-04T08:00:00Z');

type Response = Awaited<ReturnType<Instance['app']['inject']>>;
interface Instance {
  readonly app: Awaited<ReturnType<typeof buildApp>>;
  readonly services: Services;
}

let database: FreshDatabase | undefined;
let reader: Kysely<Database> | undefined;
const instances: Instance[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const { app, services } of instances.splice(0)) {
    await app.close();
    await services.close();
  }
  await reader?.destroy();
  await database?.drop();
  reader = undefined;
  database = undefined;
});

/** A settable clock for the services (registrations, claims and the limits read it). */
function clock() {
  let at = T0;
  return {
    now: () => new Date(at),
    set: (ms: number) => {
      at = ms;
    },
  };
}

/** `count` instances of the service on one fresh database, with the real per-IP limits and no delivery worker. */
async function startInstances(fresh: () => Promise<FreshDatabase>, now: () => Date, count = 1): Promise<Instance[]> {
  database = await fresh();
  const config = loadConfig({
    DATABASE_URL: database.url,
    RATE_LIMIT_INQUIRIES: 'off',
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://studio.example',
    SMTP_URL: 'smtp://127.0.0.1:9',
    INQUIRY_TO: 'studio@example.com',
  });
  const profile = loadStudioProfile(config.studioProfilePath);
  const logger = pino({ level: 'silent' });
  // One after the other: the first migrates the new database.
  for (let i = 0; i < count; i++) {
    const services = await createServices(config, profile, logger, { now });
    const app = await buildApp(appDeps({ config, logger, profile }, services));
    await app.ready();
    instances.push({ app, services });
  }
  reader = (await openDatabase(database.config)).db;
  return instances;
}

/** A new client address for every request: documentation ranges of IPv4 and IPv6 in turn. */
let addresses = 0;
const nextAddress = () => (++addresses % 2 === 0 ? `198.51.100.${addresses % 250}` : `2001:db8:${addresses.toString(16)}::1`);

const post = (instance: Instance, url: string, payload: Record<string, unknown>): Promise<Response> =>
  instance.app.inject({ method: 'POST', url, payload, remoteAddress: nextAddress() });

const registerWithEmail = (instance: Instance, email: string) =>
  post(instance, '/agent/register', { type: 'identity_assertion', assertion_type: 'verified_email', email, client_name: 'Mailer' });

async function anonymousClaim(instance: Instance): Promise<string> {
  const response = await post(instance, '/agent/register', { type: 'anonymous', client_name: 'Claimable' });
  expect(response.statusCode).toBe(201);
  return (response.json() as { claim_token: string }).claim_token;
}

const startClaim = (instance: Instance, claimToken: string, email: string) =>
  post(instance, '/agent/claim', { claim_token: claimToken, email });

/** Codes queued in the outbox to an address, however its case was written. */
async function codesMailedTo(address: string): Promise<number> {
  const rows = await (reader as Kysely<Database>).selectFrom('messages').select('to_address').execute();
  return rows.filter((row) => row.to_address.toLowerCase() === address).length;
}

function expectRefused(response: Response, wait: RegExp, retryAfterSeconds?: number): void {
  expect(response.statusCode).toBe(429);
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  if (retryAfterSeconds !== undefined) expect(retryAfter).toBe(retryAfterSeconds);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status: 429, error: 'rate_limited', detail: expect.stringMatching(wait) });
}

describe.each(BACKENDS)('claim codes mailed, on $name', ({ fresh }) => {
  it('one address gets at most 3 codes in 15 minutes, whichever registrations, claims and client addresses ask; another address is unaffected', async () => {
    const { now } = clock();
    const [instance] = (await startInstances(fresh, now)) as [Instance];

    expect((await registerWithEmail(instance, 'victim@example.com')).statusCode).toBe(202);
    expect((await startClaim(instance, await anonymousClaim(instance), 'Victim@Example.COM')).statusCode).toBe(202);
    expect((await registerWithEmail(instance, 'VICTIM@example.com')).statusCode).toBe(202);
    expect(await codesMailedTo('victim@example.com')).toBe(PER_ADDRESS_PER_15_MIN);
    // A tag after "+" reaches the same mailbox: it is no way round the limit.
    expectRefused(await registerWithEmail(instance, 'victim+1@example.com'), /to this email address/);

    // The fourth is refused, by registration and by claim alike, and nothing is mailed or kept:
    // no pending registration for it, and the claim is as it was.
    expectRefused(await registerWithEmail(instance, 'victim@example.com'), /to this email address: try again in 15 minutes/, 15 * 60);
    const claimToken = await anonymousClaim(instance);
    expectRefused(await startClaim(instance, claimToken, 'victim@EXAMPLE.com'), /try again in 15 minutes/);
    expect(await codesMailedTo('victim@example.com')).toBe(PER_ADDRESS_PER_15_MIN);
    const pending = await (reader as Kysely<Database>)
      .selectFrom('agent_clients')
      .select('client_id')
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toHaveLength(2);
    expect((await instance.services.store.auth.findClaim(hashClaimToken(claimToken)))?.status).toBe('open');

    // Someone else is not affected, by registration or by claim.
    expect((await registerWithEmail(instance, 'other@example.com')).statusCode).toBe(202);
    expect((await startClaim(instance, claimToken, 'other@example.com')).statusCode).toBe(202);
    expect(await codesMailedTo('other@example.com')).toBe(2);
  });

  it('the windows pass: 3 codes per 15 minutes, 10 per day', async () => {
    const { now, set } = clock();
    const [instance] = (await startInstances(fresh, now)) as [Instance];
    const register = () => registerWithEmail(instance, 'person@example.com');

    for (let quarter = 0; quarter < 3; quarter++) {
      set(T0 + quarter * 15 * MINUTE);
      for (let i = 0; i < PER_ADDRESS_PER_15_MIN; i++) expect((await register()).statusCode).toBe(202);
      expectRefused(await register(), /try again in 15 minutes/);
    }
    // The tenth of the day, then none until the day's first codes are a day old.
    set(T0 + 45 * MINUTE);
    expect((await register()).statusCode).toBe(202);
    expect(await codesMailedTo('person@example.com')).toBe(PER_ADDRESS_PER_DAY);
    expectRefused(await register(), /try again in 24 hours/);
    set(T0 + 3 * 60 * MINUTE);
    expectRefused(await register(), /try again in 21 hours/, 21 * 60 * 60);
    set(T0 + DAY - 1);
    expectRefused(await register(), /try again in 1 second/, 1);

    set(T0 + DAY);
    for (let i = 0; i < PER_ADDRESS_PER_15_MIN; i++) expect((await register()).statusCode).toBe(202);
    expectRefused(await register(), /try again in 15 minutes/);
    expect(await codesMailedTo('person@example.com')).toBe(PER_ADDRESS_PER_DAY + PER_ADDRESS_PER_15_MIN);
  });

  it('one claim is mailed at most 5 codes a day, whichever addresses it names', async () => {
    const { now, set } = clock();
    const [instance] = (await startInstances(fresh, now)) as [Instance];
    const claimToken = await anonymousClaim(instance);

    for (let i = 1; i <= PER_CLAIM_PER_DAY; i++) {
      set(T0 + i * MINUTE);
      expect((await startClaim(instance, claimToken, `person${i}@example.com`)).statusCode).toBe(202);
    }
    expectRefused(await startClaim(instance, claimToken, 'person6@example.com'), /for this claim: try again in 24 hours/);
    expect(await codesMailedTo('person6@example.com')).toBe(0);
    // The address itself has had nothing: another claim may mail it.
    expect((await startClaim(instance, await anonymousClaim(instance), 'person6@example.com')).statusCode).toBe(202);

    set(T0 + MINUTE + DAY);
    expect((await startClaim(instance, claimToken, 'person7@example.com')).statusCode).toBe(202);
    expectRefused(await startClaim(instance, claimToken, 'person8@example.com'), /for this claim/);
  });
});

describe('claim codes mailed by two instances on one PostgreSQL database', () => {
  it('share the limit per address, also when requests on both decide at the same moment', async () => {
    const { now } = clock();
    const both = await startInstances(freshPostgres, now, 2);
    // Each request, having read the codes already sent to the address, waits for all the others to
    // have read them too (or 200 ms, since the lock keeps the others from reading meanwhile): were
    // the decisions not serialised across instances, all six would see none sent and mail one.
    const requests = 6;
    let arrived = 0;
    let allRead!: () => void;
    const everyoneRead = new Promise<void>((resolve) => {
      allRead = resolve;
    });
    for (const { services } of both) {
      const auth = services.store.auth;
      const codesSentSince = auth.codesSentSince.bind(auth);
      vi.spyOn(auth, 'codesSentSince').mockImplementation(async (to, since, limit, tx) => {
        const sent = await codesSentSince(to, since, limit, tx);
        if ('recipient' in to) {
          arrived += 1;
          if (arrived === requests) allRead();
          await Promise.race([everyoneRead, new Promise((resolve) => setTimeout(resolve, 200))]);
        }
        return sent;
      });
    }

    const responses = await Promise.all(
      Array.from({ length: requests }, (_, i) => registerWithEmail(both[i % 2] as Instance, 'shared@example.com')),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([202, 202, 202, 429, 429, 429]);
    expect(await codesMailedTo('shared@example.com')).toBe(PER_ADDRESS_PER_15_MIN);

    vi.restoreAllMocks();
    for (const instance of both) {
      expectRefused(await startClaim(instance, await anonymousClaim(instance), 'Shared@example.com'), /try again in 15 minutes/);
    }
    expect((await registerWithEmail(both[1] as Instance, 'someone-else@example.com')).statusCode).toBe(202);
    expect(await codesMailedTo('shared@example.com')).toBe(PER_ADDRESS_PER_15_MIN);
  });
});

// Retention of agent-auth records on each backend, with a controlled clock: each rule of what has
// served its purpose (docs/operations.md, "Personal data"), with a record it deletes and one it keeps.
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { IDENTITY_ASSERTION_TTL_SECONDS } from '../../src/auth/service.js';
import { AUTH_GRACE_MS, SERVICE_MAIL_KEPT_MS } from '../../src/maintenance.js';
import type { Claim } from '../../src/storage/ports.js';
import type { Database } from '../../src/storage/schema.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { attemptDue, DAY_MS, maintenanceOn } from '../helpers/retention-fixtures.js';
import { agentClient as client } from '../helpers/store-fixtures.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const ASSERTION_MS = IDENTITY_ASSERTION_TTL_SECONDS * 1000;
const HOUR_MS = 60 * 60 * 1000;

function claim(tokenHash: string, clientId: string, expiresAt: Date, fields: Partial<Claim> = {}): Claim {
  return {
    tokenHash,
    clientId,
    status: 'open',
    email: null,
    otpHash: null,
    otpExpiresAt: null,
    failedAttempts: 0,
    expiresAt,
    createdAt: new Date(expiresAt.getTime() - 7 * DAY_MS),
    ...fields,
  };
}

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  async function tables(db: Kysely<Database>) {
    const column = async <T>(rows: Promise<T[]>, pick: (row: T) => string) => (await rows).map(pick).sort();
    return {
      clients: await column(db.selectFrom('agent_clients').select('client_id').execute(), (row) => row.client_id),
      claims: await column(db.selectFrom('agent_claims').select('token_hash').execute(), (row) => row.token_hash),
      messages: await column(db.selectFrom('messages').select('id').execute(), (row) => row.id),
      revokedTokens: await column(db.selectFrom('revoked_tokens').select('jti').execute(), (row) => row.jti),
      usedAssertions: await column(db.selectFrom('used_assertions').select('jti').execute(), (row) => row.jti),
      codeSends: await column(db.selectFrom('claim_code_sends').select('token_hash').execute(), (row) => row.token_hash),
    };
  }

  it('deletes claims once expired for longer than the grace, whatever became of them, and keeps the others', async () => {
    const { store, opened } = await stores.open();
    await store.auth.createClient(client('agt_owned', { createdAt: ago(30 * DAY_MS), email: 'owner@example.com' }));
    await store.auth.createClaim(claim('claimed-long-ago', 'agt_owned', ago(AUTH_GRACE_MS + HOUR_MS), { status: 'claimed' }));
    await store.auth.createClaim(claim('ended-lately', 'agt_owned', ago(AUTH_GRACE_MS - HOUR_MS), { status: 'ended' }));
    await store.auth.createClaim(claim('open', 'agt_owned', new Date(NOW.getTime() + DAY_MS)));
    const deleted = await maintenanceOn(store, {}, NOW).runAfter(0);
    expect(deleted).toEqual({ claims: 1 });
    expect((await tables(opened.db)).claims).toEqual(['ended-lately', 'open']);
    // A claimed registration stays: it is the agent's, owned by the address that claimed it.
    expect((await tables(opened.db)).clients).toEqual(['agt_owned']);
  });

  it('deletes a verified_email registration never confirmed once its claim has expired for longer than the grace', async () => {
    const { store, opened } = await stores.open();
    const pending = { registrationType: 'verified_email', status: 'pending', email: 'someone@example.com' } as const;
    await store.auth.createClient(client('agt_unconfirmed', { ...pending, createdAt: ago(7 * DAY_MS + AUTH_GRACE_MS + HOUR_MS) }));
    await store.auth.createClaim(claim('c-unconfirmed', 'agt_unconfirmed', ago(AUTH_GRACE_MS + HOUR_MS), { status: 'initiated' }));
    await store.auth.createClient(client('agt_waiting', { ...pending, createdAt: ago(7 * DAY_MS + AUTH_GRACE_MS - HOUR_MS) }));
    await store.auth.createClaim(claim('c-waiting', 'agt_waiting', ago(AUTH_GRACE_MS - HOUR_MS), { status: 'initiated' }));
    expect(await maintenanceOn(store, {}, NOW).runAfter(0)).toEqual({ clients: 1, claims: 1 });
    const left = await tables(opened.db);
    expect(left.clients).toEqual(['agt_waiting']);
    expect(left.claims).toEqual(['c-waiting']);
  });

  it('keeps an anonymous registration never claimed while its identity assertion works, and deletes it after that and the grace', async () => {
    const { store, opened } = await stores.open();
    // Anonymous agents use their registration without claiming it: the claim expires after 7 days,
    // the identity assertion it was given after 30.
    const anonymous = (id: string, createdAt: Date) => store.auth.createClient(client(id, { createdAt }));
    await anonymous('agt_spent', ago(ASSERTION_MS + AUTH_GRACE_MS + HOUR_MS));
    await store.auth.createClaim(claim('c-spent', 'agt_spent', ago(ASSERTION_MS + AUTH_GRACE_MS + HOUR_MS - 7 * DAY_MS)));
    await anonymous('agt_no_claim', ago(ASSERTION_MS + AUTH_GRACE_MS + HOUR_MS)); // registered where no mail is sent
    await anonymous('agt_in_grace', ago(ASSERTION_MS + AUTH_GRACE_MS - HOUR_MS));
    await anonymous('agt_working', ago(20 * DAY_MS));
    await store.auth.createClaim(claim('c-working', 'agt_working', ago(13 * DAY_MS)));
    // Claimed, or an ID-JAG subject's: owned by a person, kept however old.
    await store.auth.createClient(client('agt_claimed', { createdAt: ago(400 * DAY_MS), email: 'owner@example.com' }));
    await store.auth.createClient(
      client('agt_idjag', { createdAt: ago(400 * DAY_MS), registrationType: 'id-jag', issuer: 'https://idp.example', subject: 's1' }),
    );

    const run = maintenanceOn(store, {}, NOW);
    expect(await run.runAfter(0)).toEqual({ clients: 2, claims: 2 });
    const left = await tables(opened.db);
    expect(left.clients).toEqual(['agt_claimed', 'agt_idjag', 'agt_in_grace', 'agt_working']);
    expect(left.claims).toEqual([]);
    expect(await run.runAfter(2 * HOUR_MS)).toEqual({ clients: 1 });
    expect((await tables(opened.db)).clients).toEqual(['agt_claimed', 'agt_idjag', 'agt_working']);
  });

  it('deletes a revoked registration once every assertion it had has expired and the grace has passed', async () => {
    const { store, opened } = await stores.open();
    for (const id of ['agt_revoked_long_ago', 'agt_revoked_lately']) {
      await store.auth.createClient(client(id, { createdAt: ago(400 * DAY_MS), email: 'owner@example.com' }));
    }
    await store.auth.revokeClient('agt_revoked_long_ago', ago(ASSERTION_MS + AUTH_GRACE_MS + HOUR_MS));
    await store.auth.revokeClient('agt_revoked_lately', ago(10 * DAY_MS));
    expect(await maintenanceOn(store, {}, NOW).runAfter(0)).toEqual({ clients: 1 });
    expect((await tables(opened.db)).clients).toEqual(['agt_revoked_lately']);
  });

  it('deletes service mail a day after its delivery ended, with the delivery and its attempts, and keeps mail still to send', async () => {
    const { store, opened } = await stores.open();
    const mail = (id: string) => ({ id, to: 'someone@example.com', subject: 'Your code', body: 'Your code is 123456.' });
    await store.outbox.enqueueMessage(mail('m-sent-long-ago'), 'email', ago(SERVICE_MAIL_KEPT_MS + 2 * HOUR_MS));
    await attemptDue(store, ago(SERVICE_MAIL_KEPT_MS + HOUR_MS), 'succeeded');
    await store.outbox.enqueueMessage(mail('m-dead-lately'), 'email', ago(3 * HOUR_MS));
    await attemptDue(store, ago(2 * HOUR_MS), 'dead');
    await store.outbox.enqueueMessage(mail('m-unsent'), 'email', ago(3 * DAY_MS));
    expect(await maintenanceOn(store, {}, NOW).runAfter(0)).toEqual({ messages: 1, deliveries: 1, attempts: 1 });
    const left = await tables(opened.db);
    expect(left.messages).toEqual(['m-dead-lately', 'm-unsent']);
    expect(await store.outbox.countByStatus()).toMatchObject({ pending: 1, dead: 1 });
  });

  it('deletes revoked token ids, used assertions and code sends once expired, and keeps those that have not', async () => {
    const { store, opened } = await stores.open();
    const [expired, live] = [ago(1_000), new Date(NOW.getTime() + 1_000)];
    await store.auth.revokeToken('jti-expired', expired, ago(HOUR_MS));
    await store.auth.revokeToken('jti-live', live, ago(HOUR_MS));
    await store.auth.useAssertion('https://idp.example', 'jti-expired', expired);
    await store.auth.useAssertion('https://idp.example', 'jti-live', live);
    const send = { recipient: 'someone@example.com', domain: 'example.com', sentAt: ago(DAY_MS) };
    await store.auth.recordCodeSend({ ...send, tokenHash: 'send-expired', expiresAt: expired });
    await store.auth.recordCodeSend({ ...send, tokenHash: 'send-live', expiresAt: live });
    expect(await maintenanceOn(store, {}, NOW).runAfter(0)).toEqual({ revokedTokens: 1, usedAssertions: 1, codeSends: 1 });
    const left = await tables(opened.db);
    expect([left.revokedTokens, left.usedAssertions, left.codeSends]).toEqual([['jti-live'], ['jti-live'], ['send-live']]);
  });
});

// Two instances of the service on one PostgreSQL database, coordinated by nothing but the database:
// every inquiry delivered exactly once, one Idempotency-Key → one inquiry, tokens valid everywhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { type FreshDatabase, freshPostgres } from '../helpers/databases.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let database: FreshDatabase;
let smtp: TestSmtpServer;
let one: TestApp;
let two: TestApp;
const twoLogs: string[] = [];

beforeAll(async () => {
  database = await freshPostgres();
  smtp = await startSmtpServer();
  const env = { DATABASE_URL: database.url, SMTP_URL: smtp.url, INQUIRY_TO: 'studio@example.com' };
  one = await startTestApp({ env, listen: true });
  two = await startTestApp({ env: { ...env, LOG_LEVEL: 'warn' }, listen: true, logLines: twoLogs });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
  await smtp?.stop();
  await database?.drop();
});

const post = (app: TestApp, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/api/contact`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('two instances on one PostgreSQL database', () => {
  it('deliver 500 inquiries sent alternately to both exactly once', async () => {
    const references: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => post(i % 2 === 0 ? one : two, validInquiry({ message: `instance test ${batch}-${i}` }))),
      );
      for (const response of responses) {
        expect(response.status).toBe(200);
        references.push(referenceOf(await response.text()));
      }
    }
    expect(new Set(references).size).toBe(500);
    await smtp.waitFor(500, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // time for a second copy to show up, if any
    const mailed = smtp.received.map((mail) => String(mail.parsed.headers.get('x-inquiry-reference')));
    const counts = new Map<string, number>();
    for (const reference of mailed) counts.set(reference, (counts.get(reference) ?? 0) + 1);
    for (const reference of references) expect(counts.get(reference)).toBe(1);
    expect(mailed).toHaveLength(500);
  });

  it('keep one inquiry for one Idempotency-Key sent to both at once', async () => {
    const body = validInquiry({ message: 'one key, two instances' });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? one : two, body, { 'idempotency-key': 'shared-key' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const references = new Set(await Promise.all(responses.map(async (r) => referenceOf(await r.text()))));
    expect(references.size).toBe(1);
  });

  it('fold the same inquiry sent to both at once into one, with one reference and one mail', async () => {
    const folded: string[] = [];
    for (let round = 0; round < 5; round++) {
      const body = validInquiry({ email: `twice-${round}@example.com`, message: `sent to both instances, round ${round}` });
      const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? one : two, body)));
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      const references = new Set(await Promise.all(responses.map(async (r) => referenceOf(await r.text()))));
      expect(references.size, `round ${round}`).toBe(1);
      folded.push(...references);
    }
    const mailsOf = (reference: string) => smtp.received.filter((mail) => mail.parsed.headers.get('x-inquiry-reference') === reference);
    const deadline = Date.now() + 15_000;
    while (folded.some((reference) => mailsOf(reference).length === 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500)); // time for a second copy to show up, if any
    expect(folded.map((reference) => mailsOf(reference).length)).toEqual([1, 1, 1, 1, 1]);
  });

  it('accept a token issued by one and revoked on the other', async () => {
    const registration = await one.services.auth.register({ type: 'anonymous', client_name: 'Cross-instance agent' });
    const { access_token } = await one.services.auth.token({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: String(registration.body.identity_assertion),
    });
    const viaTwo = await post(two, validInquiry({ message: 'token from one, used on two' }), { authorization: `Bearer ${access_token}` });
    expect((await two.services.store.inquiries.findByReference(referenceOf(await viaTwo.text())))?.clientId).toBe(
      registration.body.client_id,
    );
    await two.services.auth.revoke(access_token);
    const afterRevoke = await post(one, validInquiry({ message: 'revoked on two, used on one' }), {
      authorization: `Bearer ${access_token}`,
    });
    expect(afterRevoke.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it("take over a crashed instance's claims once their lease ends", async () => {
    // An instance claims deliveries and dies before sending them (its claims are all that is left).
    const stuck = validInquiry({ message: 'claimed by an instance that died' });
    await one.services.worker.stop();
    await two.services.worker.stop();
    const response = await post(one, stuck);
    const reference = referenceOf(await response.text());
    const leaseMs = 1_000;
    const claimed = await one.services.store.outbox.claimDue(new Date(), 100, leaseMs, 'a-worker-that-died');
    expect(claimed.map((item) => item.delivery.reference)).toContain(reference);
    // The other instance, running, delivers it once the lease has run out — not before.
    await two.services.worker.start();
    await new Promise((resolve) => setTimeout(resolve, leaseMs / 2));
    expect(smtp.received.some((mail) => mail.parsed.headers.get('x-inquiry-reference') === reference)).toBe(false);
    const deadline = Date.now() + 15_000;
    while (!smtp.received.some((mail) => mail.parsed.headers.get('x-inquiry-reference') === reference)) {
      if (Date.now() > deadline) throw new Error('the expired claim was not taken over');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    let [delivery] = await two.services.store.outbox.forReference(reference);
    while (delivery?.status !== 'succeeded' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      [delivery] = await two.services.store.outbox.forReference(reference);
    }
    expect(delivery, twoLogs.join('')).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

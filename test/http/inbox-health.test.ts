// The inbox's delivery health in process (docs/inbox.md): the overview's table per channel, and the
// banner on every page once a channel alerts, naming it and its last error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { type SignedIn, signIn } from '../helpers/inbox.js';
import { TEST_WEBHOOK_SECRET } from '../helpers/webhook.js';

let t: TestApp;
let user: SignedIn;

beforeAll(async () => {
  // A webhook at a closed port and a retry window of a few tries: its deliveries are given up at once.
  t = await startTestApp({
    env: { INBOX_USERS: 'studio@example.com', WEBHOOK_URL: 'http://127.0.0.1:9/never', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET },
    retry: { baseMs: 10, capMs: 20, windowMs: 100 },
  });
  user = await signIn(t.app, t.services, 'studio@example.com');
}, 60_000);
afterAll(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: user.cookie } });

describe('delivery health in the inbox', () => {
  it('shows no banner and a channel with no delivery yet while nothing has failed', async () => {
    const overview = await get('/inbox/overview');
    expect(overview.body).not.toContain('class="banner"');
    expect(overview.body).toContain('<th scope="row">Webhook</th><td>No delivery yet</td><td>0</td><td>0</td><td>0</td><td>0</td>');
  });

  it('names the channel and its last error in a banner on every page once a delivery is given up', async () => {
    const answer = await t.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
    const reference = referenceOf(answer.body);
    const deadline = Date.now() + 10_000;
    while ((await t.services.store.outbox.forReference(reference))[0]?.status !== 'dead') {
      if (Date.now() > deadline) throw new Error('the delivery was not given up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const url of ['/inbox', '/inbox/overview', `/inbox/inquiries/${reference}`]) {
      const page = await get(url);
      expect(page.body, url).toMatch(
        /<aside class="banner" aria-label="Delivery alerts">\n<p><strong>Webhook delivery gave up on a delivery\.<\/strong> Last error: [^<]+<\/p>/,
      );
    }
    const overview = (await get('/inbox/overview')).body;
    expect(overview).toMatch(
      /<th scope="row">Webhook<\/th><td><strong class="error-text">Gave up on a delivery<\/strong> since its last success<\/td><td>0<\/td><td>0<\/td><td>1<\/td><td>0<\/td><td><span class="error-text">[^<]+<\/span> <time/,
    );
    const inquiry = (await get(`/inbox/inquiries/${reference}`)).body;
    expect(inquiry).toContain('<h3 id="delivery-webhook">webhook: given up</h3>');
    expect(inquiry).toContain('Send failed deliveries again');
  });
});

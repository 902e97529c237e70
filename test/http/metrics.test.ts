// GET /metrics: not served without METRICS_TOKEN, refused without the token, and with it the
// Prometheus text with requests, inquiries, deliveries by channel and status, and process metrics.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp, validInquiry } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook.js';

const TOKEN = 'a-metrics-token-of-some-length';
let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

describe('GET /metrics', () => {
  it('is not served without METRICS_TOKEN', async () => {
    testApp = await startTestApp({ startWorker: false });
    expect((await testApp.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('answers 401 without the token or with a wrong one', async () => {
    testApp = await startTestApp({ env: { METRICS_TOKEN: TOKEN }, startWorker: false });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`, `Bearer${TOKEN}`]) {
      const response = await testApp.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(response.statusCode).toBe(401);
      expect(response.body).not.toContain('studio_inquiry_');
      // RFC 6750 §3.1: credentials that were sent are said to be invalid; none sent, none said.
      expect(response.headers['www-authenticate']).toBe(authorization === undefined ? 'Bearer' : 'Bearer error="invalid_token"');
    }
  });

  it('takes the token with the scheme in any case (RFC 9110 §11.1)', async () => {
    testApp = await startTestApp({ env: { METRICS_TOKEN: TOKEN }, startWorker: false });
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER ${TOKEN}`]) {
      const response = await testApp.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      expect(response.statusCode, authorization).toBe(200);
    }
  });

  it('reports requests, accepted inquiries, deliveries and process metrics', async () => {
    testApp = await startTestApp({ env: { METRICS_TOKEN: TOKEN, WEBHOOK_URL: 'http://127.0.0.1:9/closed' }, startWorker: false });
    await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
    await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
    await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: { email: 'bad' } });
    await testApp.app.inject({ method: 'GET', url: '/api/%zz' }); // refused before routing, by Fastify itself
    const response = await testApp.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = response.body;
    expect(text).toContain('studio_inquiry_http_requests_total{method="POST",route="/api/contact",status="200"} 2');
    expect(text).toContain('studio_inquiry_http_requests_total{method="POST",route="/api/contact",status="400"} 1');
    expect(text).toContain('studio_inquiry_http_requests_total{method="GET",route="unmatched",status="400"} 1');
    expect(text).toContain('studio_inquiry_inquiries_accepted_total{outcome="created"} 1');
    expect(text).toContain('studio_inquiry_inquiries_accepted_total{outcome="duplicate"} 1');
    expect(text).toContain('studio_inquiry_deliveries{channel="webhook",status="pending"} 1');
    // Every status of every configured channel is reported, those without deliveries as 0.
    for (const status of ['succeeded', 'failed', 'dead'])
      expect(text).toContain(`studio_inquiry_deliveries{channel="webhook",status="${status}"} 0`);
    expect(text).toContain('studio_inquiry_outbox_readable 1');
    expect(text).toContain('# TYPE studio_inquiry_delivery_latency_seconds histogram');
    expect(text).toContain('studio_inquiry_process_cpu_user_seconds_total');
  });

  it('observes the delivery latency of each successful delivery', async () => {
    const receiver = await startWebhookReceiver();
    try {
      testApp = await startTestApp({ env: { METRICS_TOKEN: TOKEN, WEBHOOK_URL: receiver.url } });
      await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
      await receiver.waitFor((received) => received.length === 1);
      // The attempt is recorded after the answer.
      const outbox = testApp.services.store.outbox;
      await vi.waitUntil(async () => (await outbox.countByStatus()).succeeded === 1, { timeout: 5_000, interval: 20 });
      const text = (await testApp.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
      expect(text).toContain('studio_inquiry_delivery_latency_seconds_count{channel="webhook"} 1');
      expect(text).toContain('studio_inquiry_deliveries{channel="webhook",status="succeeded"} 1');
    } finally {
      await receiver.close();
    }
  });

  it('still reports requests and process metrics while the database cannot be read, and says so', async () => {
    testApp = await startTestApp({ env: { METRICS_TOKEN: TOKEN, WEBHOOK_URL: 'http://127.0.0.1:9/closed' }, startWorker: false });
    await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
    await testApp.services.store.close();
    const response = await testApp.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('studio_inquiry_http_requests_total{method="POST",route="/api/contact",status="200"} 1');
    expect(response.body).toContain('studio_inquiry_process_cpu_user_seconds_total');
    expect(response.body).toContain('studio_inquiry_outbox_readable 0');
    expect(response.body).not.toMatch(/^studio_inquiry_deliveries\{/m);
  });

  it('refuses a short METRICS_TOKEN at start-up', async () => {
    await expect(startTestApp({ env: { METRICS_TOKEN: 'short' } })).rejects.toThrow(/METRICS_TOKEN/);
  });
});

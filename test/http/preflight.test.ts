// CORS preflights from a page of an allowed origin: /mcp, /mcp/verified and /api/contact advertise only POST (their
// GET and DELETE answer 405) and only the request headers each reads (no MCP session headers: the
// server is stateless); the headers a page reads back include no session id either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
let origin: string;
beforeAll(async () => {
  testApp = await startTestApp({ startWorker: false });
  origin = new URL(testApp.config.publicUrl).origin;
});
afterAll(async () => {
  await testApp?.close();
});

const preflight = (url: string, method: string, headers?: string) =>
  testApp.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      ...(headers !== undefined && { 'access-control-request-headers': headers }),
    },
  });

const list = (value: string | string[] | number | undefined) =>
  String(value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

describe('CORS preflights', () => {
  it.each(['/mcp', '/mcp/verified'])('%s: POST only, with the MCP transport headers and no session ones', async (url) => {
    const answer = await preflight(url, 'POST', 'content-type, mcp-protocol-version, mcp-method, mcp-name, authorization');
    expect(answer.statusCode).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(origin);
    expect(list(answer.headers['access-control-allow-methods'])).toEqual(['post']);
    expect(list(answer.headers['access-control-allow-headers'])).toEqual([
      'content-type',
      'authorization',
      'mcp-protocol-version',
      'mcp-method',
      'mcp-name',
    ]);
    // 405 for both, so a browser is never offered them.
    for (const method of ['GET', 'DELETE']) expect((await testApp.app.inject({ method, url })).statusCode).toBe(405);
  });

  it("/api/contact: POST only, with the page's headers", async () => {
    const answer = await preflight('/api/contact', 'POST', 'content-type, idempotency-key, altcha, honeypot');
    expect(list(answer.headers['access-control-allow-methods'])).toEqual(['post']);
    expect(list(answer.headers['access-control-allow-headers'])).toEqual([
      'content-type',
      'authorization',
      'idempotency-key',
      'altcha',
      'honeypot',
    ]);
    for (const method of ['GET', 'DELETE']) expect((await testApp.app.inject({ method, url: '/api/contact' })).statusCode).toBe(405);
  });

  it('never advertises Mcp-Session-Id or Last-Event-ID, asked for or read back', async () => {
    for (const url of ['/mcp', '/mcp/verified', '/api/contact', '/api/contact/challenge']) {
      const answer = await preflight(url, 'POST', 'mcp-session-id, last-event-id');
      const advertised = [
        ...list(answer.headers['access-control-allow-headers']),
        ...list(answer.headers['access-control-expose-headers']),
      ];
      expect(advertised).not.toContain('mcp-session-id');
      expect(advertised).not.toContain('last-event-id');
      expect(list(answer.headers['access-control-allow-methods'])).not.toContain('delete');
    }
    const posted = await testApp.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(posted.statusCode).toBe(200);
    expect(list(posted.headers['access-control-expose-headers'])).not.toContain('mcp-session-id');
  });
});

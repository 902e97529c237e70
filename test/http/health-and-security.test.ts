// GET /api/health, unknown routes, CORS and the security headers every response carries.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REFERENCE_IN_TEXT, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

describe('GET /api/health', () => {
  it('answers 200 with the Health body while the store answers', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await testApp.app.inject({ method: 'GET', url: '/api/health' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json()).toEqual({ status: 'ok', service: 'studio-inquiry' });
  });

  it('answers 503 problem+json when the store does not answer', async () => {
    testApp = await startTestApp({ startWorker: false });
    await testApp.services.store.close();
    const response = await testApp.app.inject({ method: 'GET', url: '/api/health' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ status: 503, error: 'store_unavailable' });
  });
});

describe('every response', () => {
  it('answers unknown routes with 404 problem+json', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await testApp.app.inject({ method: 'GET', url: '/wp-admin' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ status: 404, error: 'not_found' });
  });

  it('answers an unknown route 404 whatever its body, and says of an empty body only that it is empty', async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const contentType of ['application/json', 'application/json; charset=latin1', 'text/plain']) {
      const response = await testApp.app.inject({ method: 'POST', url: '/nope', headers: { 'content-type': contentType }, payload: '' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ status: 404, error: 'not_found', detail: 'There is no POST /nope here.' });
    }
    const empty = await testApp.app.inject({ method: 'POST', url: '/agent/register', headers: { 'content-type': 'application/json' } });
    expect(empty.json()).toMatchObject({ status: 400, error: 'invalid_json', detail: 'The request body is empty; send a JSON object.' });
  });

  it('answers a method a path does not serve with 405 and the methods it does, in the format of the path, whatever the body', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const cases = [
      { method: 'POST', url: '/api/health', allow: 'GET, HEAD' },
      { method: 'DELETE', url: '/.well-known/jwks.json', allow: 'GET, HEAD' },
      { method: 'PUT', url: '/openapi.json?x=1', allow: 'GET, HEAD' },
      { method: 'GET', url: '/agent/register', allow: 'POST' },
      { method: 'TRACE', url: '/api/contact', allow: 'POST' },
      { method: 'QUERY', url: '/mcp', allow: 'POST' },
    ] as const;
    for (const { method, url, allow } of cases) {
      for (const payload of [undefined, '{"a":', 'x'.repeat(70 * 1024)]) {
        const response = await testApp.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload });
        const path = url.split('?')[0];
        expect(response.statusCode, `${method} ${url}`).toBe(405);
        expect(response.headers.allow).toBe(allow);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(response.json()).toMatchObject({
          status: 405,
          error: 'method_not_allowed',
          detail: `${method} is not served at ${path}; it answers ${allow}.`,
        });
      }
    }
    // /oauth/* answers in the OAuth error shape (RFC 6749 §5.2), as its other errors.
    const token = await testApp.app.inject({ method: 'GET', url: '/oauth/token' });
    expect(token.statusCode).toBe(405);
    expect(token.headers.allow).toBe('POST');
    expect(token.json()).toEqual({ error: 'method_not_allowed', error_description: 'GET is not served at /oauth/token; it answers POST.' });
    // The path as the router reads it: percent-encoded, or in an absolute-form target (RFC 9112 §3.2.2).
    const encoded = await testApp.app.inject({ method: 'POST', url: '/api/%68ealth' });
    expect(encoded.statusCode).toBe(405);
    expect(encoded.headers.allow).toBe('GET, HEAD');
    const absolute = await rawExchange(
      'POST http://studio.example/api/health HTTP/1.1\r\nHost: studio.example\r\nConnection: close\r\n\r\n',
    );
    expect(absolute.head).toMatch(/^HTTP\/1\.1 405 /);
    expect(absolute.head).toMatch(/^allow: GET, HEAD$/im);
    const oauth = await rawExchange('GET http://studio.example/oauth/token HTTP/1.1\r\nHost: studio.example\r\nConnection: close\r\n\r\n');
    expect(oauth.head).toMatch(/^HTTP\/1\.1 405 /);
    expect(JSON.parse(oauth.payload)).toEqual({
      error: 'method_not_allowed',
      error_description: 'GET is not served at /oauth/token; it answers POST.',
    });
    // A path nothing is served at stays a 404, whatever the method.
    expect((await testApp.app.inject({ method: 'TRACE', url: '/api' })).statusCode).toBe(404);
  });

  /** What the app answers on one connection to `request`, written as is (the connection closed after). */
  async function rawExchange(request: string): Promise<{ head: string; payload: string; received: string }> {
    const socket: Socket = connect(Number(new URL(testApp.baseUrl).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(request);
    await new Promise((resolve) => socket.once('close', resolve));
    const [head = '', payload = ''] = received.split('\r\n\r\n');
    return { head, payload, received };
  }

  /** The usual headers and a problem+json body of `status`, on a raw answer. */
  function expectRawProblem({ head, payload }: { head: string; payload: string }, status: number, error: string) {
    expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(head.toLowerCase()).toContain('content-type: application/problem+json; charset=utf-8');
    expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(head.toLowerCase()).toContain('content-security-policy: ');
    const requestId = /x-request-id: ([0-9a-f-]{36})/.exec(head.toLowerCase())?.[1];
    expect(requestId).toBeDefined();
    expect(JSON.parse(payload)).toMatchObject({ status, error, requestId });
  }

  it('answers a request whose body stalls with 408 once it has taken too long, storing nothing', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true, requestTimeoutMs: 1_000 });
    const started = performance.now();
    const stalled = await rawExchange(
      'POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 87\r\n\r\n{"firstName":"Ada","l',
    );
    expectRawProblem(stalled, 408, 'invalid_request');
    expect(performance.now() - started).toBeLessThan(5_000);
    const headers = await rawExchange('GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expectRawProblem(headers, 408, 'invalid_request');
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);
  });

  it('answers the requests pipelined before one the parser refuses, in order, before refusing it', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const body = JSON.stringify(validInquiry());
    const inquiry = `POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const health = 'GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n';
    const { received } = await rawExchange(`${health}${inquiry}GARBAGE\r\n\r\n`);
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    expect(statuses).toEqual(['200', '200', '400']);
    const reference = REFERENCE_IN_TEXT.exec(received)?.[0];
    expect(reference).toBeDefined();
    expect(await testApp.services.store.inquiries.findByReference(reference ?? '')).toBeDefined();
  });

  it('answers the requests pipelined before one whose body the parser refuses, then refuses it', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const body = JSON.stringify(validInquiry());
    const inquiry = `POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    // Its headers are fine (the app has it), its first chunk size is not a number.
    const badChunk = 'POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n';
    const { received } = await rawExchange(`${inquiry}${badChunk}`);
    expect([...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])).toEqual(['200', '400']);
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(1);
  });

  it('survives a CONNECT whose client resets the connection without reading the answer', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    for (let i = 0; i < 20; i++) {
      const socket: Socket = connect(Number(new URL(testApp.baseUrl).port), '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('CONNECT a:1 HTTP/1.1\r\nHost: a\r\n\r\n');
      socket.resetAndDestroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await fetch(`${testApp.baseUrl}/api/health`)).status).toBe(200);
  });

  it('answers an Expect it does not know with 417, and CONNECT with 501, as problem+json with the usual headers', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const body = JSON.stringify(validInquiry());
    const expectation = await rawExchange(
      `POST /api/contact HTTP/1.1\r\nHost: x\r\nExpect: 100-foo\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expectRawProblem(expectation, 417, 'invalid_request');
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);
    expectRawProblem(await rawExchange('CONNECT localhost:80 HTTP/1.1\r\nHost: localhost:80\r\n\r\n'), 501, 'not_implemented');
    // 100-continue is understood: the inquiry is stored.
    const continued = await rawExchange(
      `POST /api/contact HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(continued.received).toMatch(/HTTP\/1\.1 200 /);
  });

  it.each([
    ['a control character in a header', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Type: \u0001\r\n\r\n', 400],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
      400,
    ],
    ['a URL too large', `GET /?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
  ])('answers a request the HTTP parser refuses (%s) with problem+json and the usual headers', async (_case, request, status) => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const { head, payload } = await rawExchange(request);
    expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(head.toLowerCase()).toContain('content-type: application/problem+json; charset=utf-8');
    expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(head.toLowerCase()).toContain('content-security-policy: ');
    const requestId = /x-request-id: ([0-9a-f-]{36})/.exec(head.toLowerCase())?.[1];
    expect(JSON.parse(payload)).toMatchObject({ status, error: 'invalid_request', requestId });
  });

  it('answers an HTTP/1.1 request without Host (RFC 9112 §3.2) with 400 problem+json and the usual headers, storing nothing', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const body = JSON.stringify(validInquiry());
    for (const request of [
      'GET /api/health HTTP/1.1\r\n\r\n',
      `POST /api/contact HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      // The absolute form names a host, but the request still lacks the header field.
      'GET http://localhost/api/health HTTP/1.1\r\n\r\n',
    ]) {
      const { head, payload } = await rawExchange(request);
      const line = request.split('\r\n')[0];
      expect(head, line).toMatch(/^HTTP\/1\.1 400 /);
      expect(head.toLowerCase(), line).toContain('content-type: application/problem+json; charset=utf-8');
      expect(head.toLowerCase(), line).toContain('x-content-type-options: nosniff');
      expect(head.toLowerCase(), line).toContain('content-security-policy: ');
      expect(head.toLowerCase(), line).toContain('connection: close');
      expect(head.toLowerCase(), line).toMatch(/x-request-id: [0-9a-f-]{36}/);
      expect(JSON.parse(payload), line).toMatchObject({ status: 400, error: 'invalid_request', detail: expect.stringContaining('Host') });
    }
    expect(await testApp.services.store.inquiries.list({ limit: 10 })).toHaveLength(0);
    // An empty Host is one (RFC 9112 §3.2: for a target without an authority), and HTTP/1.0 has none to send.
    expect((await rawExchange('GET /api/health HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n')).head).toMatch(/^HTTP\/1\.1 200 /);
    expect((await rawExchange('GET /api/health HTTP/1.0\r\n\r\n')).head).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("answers an OPTIONS that is no CORS preflight with 400 in the route's error format, and a preflight with 204", async () => {
    testApp = await startTestApp({ startWorker: false });
    for (const headers of [
      {},
      { origin: 'http://localhost:3000' },
      { 'access-control-request-method': 'POST' },
      { origin: '', 'access-control-request-method': 'POST' },
      { origin: 'http://localhost:3000', 'access-control-request-method': '' },
    ]) {
      const api = await testApp.app.inject({ method: 'OPTIONS', url: '/api/contact', headers });
      expect(api.statusCode).toBe(400);
      expect(api.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(api.json()).toMatchObject({ status: 400, error: 'invalid_request', detail: expect.stringContaining('CORS preflight') });
      const oauth = await testApp.app.inject({ method: 'OPTIONS', url: '/oauth/token', headers });
      expect(oauth.statusCode).toBe(400);
      expect(oauth.json()).toMatchObject({ error: 'invalid_request' });
    }
    const preflight = await testApp.app.inject({
      method: 'OPTIONS',
      url: '/api/contact',
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:3000');
  });

  it('carries security headers and a request id', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await testApp.app.inject({ method: 'GET', url: '/api/health' });
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    expect(response.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    // Served over plain HTTP here: no HSTS, no upgrade-insecure-requests.
    expect(response.headers['strict-transport-security']).toBeUndefined();
  });

  it('answers a malformed percent-encoding in the URL with 400 problem+json and the usual headers', async () => {
    testApp = await startTestApp({ startWorker: false, listen: true });
    for (const path of ['/api/%zz', '/oauth/%zz']) {
      const response = await fetch(`${testApp.baseUrl}${path}`, { method: 'POST', headers: { origin: 'http://localhost:3000' } });
      expect(response.status, path).toBe(400);
      // A page of an allowed origin (PUBLIC_URL's by default) can read the answer; another cannot.
      expect(response.headers.get('access-control-allow-origin'), path).toBe('http://localhost:3000');
      expect(response.headers.get('access-control-expose-headers'), path).toContain('X-Request-Id');
      expect(response.headers.get('vary'), path).toMatch(/Origin/);
      const elsewhere = await fetch(`${testApp.baseUrl}${path}`, { method: 'POST', headers: { origin: 'https://evil.example' } });
      expect(elsewhere.status, path).toBe(400);
      expect(elsewhere.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(elsewhere.headers.get('vary'), path).toMatch(/Origin/);
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
      if (path.startsWith('/oauth/')) {
        // RFC 6749 §5.2 on /oauth/*, as every other error there.
        expect(await response.json()).toMatchObject({ error: 'invalid_request' });
        continue;
      }
      expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(await response.json()).toMatchObject({ status: 400, error: 'invalid_request', detail: expect.stringContaining('percent') });
    }
  });

  /**
   * The answers on one connection to `request`, sent while the app closes: a request whose body is
   * still on its way keeps the connection busy while the app closes, and `request`, pipelined
   * behind it, then reaches the closing app (Fastify's load-shedding path).
   */
  async function whileClosing(request: string): Promise<string[]> {
    testApp = await startTestApp({ startWorker: false, listen: true });
    const { port } = new URL(testApp.baseUrl);
    const body = JSON.stringify(validInquiry());
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/contact HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = testApp.app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(`${body.slice(10)}${request}`);
    await closed;
    await new Promise((resolve) => socket.once('close', resolve));
    return received.split(/(?=HTTP\/1\.1 )/);
  }

  it('answers requests that arrive while it closes with 503 problem+json and the usual headers', async () => {
    const [first = '', second = ''] = await whileClosing(
      'GET /api/health HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:3000\r\n\r\n',
    );
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    const [head = '', payload = ''] = second.split('\r\n\r\n');
    expect(head.toLowerCase()).toContain('content-type: application/problem+json; charset=utf-8');
    expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(head.toLowerCase()).toMatch(/x-request-id: [0-9a-f-]{36}/);
    expect(head.toLowerCase()).toContain('connection: close');
    // Readable by a page of an allowed origin, Retry-After included.
    expect(head.toLowerCase()).toContain('access-control-allow-origin: http://localhost:3000');
    expect(head.toLowerCase()).toMatch(/access-control-expose-headers: .*retry-after/);
    expect(JSON.parse(payload)).toMatchObject({ status: 503, error: 'shutting_down' });
  });

  it('still answers a CORS preflight while it closes, so that a page sends its request and reads the 503', async () => {
    const [first = '', preflight = ''] = await whileClosing(
      'OPTIONS /api/contact HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:3000\r\nAccess-Control-Request-Method: POST\r\n\r\n',
    );
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(preflight).toMatch(/^HTTP\/1\.1 204 /);
    expect(preflight.toLowerCase()).toContain('access-control-allow-origin: http://localhost:3000');
    expect(preflight.toLowerCase()).toMatch(/access-control-allow-methods: .*post/);
  });

  it('sends HSTS when PUBLIC_URL is https', async () => {
    testApp = await startTestApp({ env: { PUBLIC_URL: 'https://studio.example' }, startWorker: false });
    const response = await testApp.app.inject({ method: 'GET', url: '/api/health' });
    expect(response.headers['strict-transport-security']).toContain('max-age=');
  });
});

describe('CORS', () => {
  const preflight = (origin: string) =>
    testApp.app.inject({
      method: 'OPTIONS',
      url: '/api/contact',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,idempotency-key' },
    });

  it('allows the origins of CORS_ORIGINS and no other', async () => {
    testApp = await startTestApp({ env: { CORS_ORIGINS: 'https://studio.example,https://www.studio.example' }, startWorker: false });
    const allowed = await preflight('https://www.studio.example');
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://www.studio.example');
    expect(String(allowed.headers['access-control-allow-headers']).toLowerCase()).toContain('idempotency-key');
    const denied = await preflight('https://evil.example');
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('defaults to the origin of PUBLIC_URL', async () => {
    testApp = await startTestApp({ startWorker: false });
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/api/contact',
      headers: { origin: 'http://localhost:3000' },
      payload: validInquiry(),
    });
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:3000');
  });

  it('lets any origin read the discovery documents, preflight included, while the API keeps to CORS_ORIGINS', async () => {
    testApp = await startTestApp({ env: { CORS_ORIGINS: 'https://studio.example' }, startWorker: false });
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/openapi.json', '/auth.md', '/llms.txt']) {
      const asked = await testApp.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://agent.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'mcp-protocol-version',
        },
      });
      expect(asked.statusCode, url).toBe(204);
      expect(asked.headers['access-control-allow-origin'], url).toBe('*');
      expect(asked.headers['access-control-allow-headers'], url).toBe('mcp-protocol-version');
      const read = await testApp.app.inject({ method: 'GET', url, headers: { origin: 'https://agent.example' } });
      expect(read.statusCode, url).toBe(200);
      expect(read.headers['access-control-allow-origin'], url).toBe('*');
    }
    expect((await preflight('https://agent.example')).headers['access-control-allow-origin']).toBeUndefined();
    // Only documents that exist: a preflight for another path is the API's to answer.
    const unknown = await testApp.app.inject({
      method: 'OPTIONS',
      url: '/.well-known/not-served-here',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET' },
    });
    expect(unknown.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows any origin with CORS_ORIGINS=*', async () => {
    testApp = await startTestApp({ env: { CORS_ORIGINS: '*' }, startWorker: false });
    expect((await preflight('https://anywhere.example')).headers['access-control-allow-origin']).toBe('*');
  });

  it('covers GET /api/health like the rest of the API', async () => {
    testApp = await startTestApp({ env: { CORS_ORIGINS: '*' }, startWorker: false });
    const response = await testApp.app.inject({ method: 'GET', url: '/api/health', headers: { origin: 'https://anywhere.example' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });
});

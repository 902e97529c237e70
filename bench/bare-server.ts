// The benchmark's baselines: the least a Node HTTP server can do to answer GET /api/health with the
// service's body. Run as its own process, like the service, so both share the same conditions
// (`node --import tsx`, one core to itself at best). PORT and HOST come from the environment.
//
// With BARE_HEADERS=service it also sends every header the service sends on that answer (the
// security headers, computed the same way, and a fresh request id), so that the service's ratio to
// it is the price of the framework, hooks and store ping alone, and its ratio to the plain baseline
// is the price of the headers in node:http itself.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { securityHeaders } from '../src/http/security-headers.js';

const BODY = JSON.stringify({ status: 'ok', service: 'studio-inquiry' });
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) };
const SERVICE_HEADERS = process.env.BARE_HEADERS === 'service' ? securityHeaders(false) : undefined;

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/api/health') {
    response.writeHead(200, SERVICE_HEADERS ? { ...SERVICE_HEADERS, 'x-request-id': randomUUID(), ...HEADERS } : HEADERS);
    response.end(BODY);
    return;
  }
  response.writeHead(404, { 'content-length': 0 });
  response.end();
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

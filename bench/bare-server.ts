// The bench's baselines: the least a Node HTTP server can do to answer GET /api/health with the
// service's body, in a process of its own like the service (PORT, HOST from the environment). With
// BARE_HEADERS=service it also sends the service's headers, isolating the framework's price from theirs.
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

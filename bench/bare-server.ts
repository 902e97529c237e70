// The benchmark's baseline: the least a Node HTTP server can do to answer GET /api/health with the
// service's body. Run as its own process, like the service, so both share the same conditions
// (`node --import tsx`, one core to itself at best). PORT and HOST come from the environment.
import { createServer } from 'node:http';

const BODY = JSON.stringify({ status: 'ok', service: 'studio-inquiry' });
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) };

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/api/health') {
    response.writeHead(200, HEADERS);
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

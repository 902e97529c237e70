// Starting and stopping the HTTP server (docs/operations.md): a listen
// failure is one line naming the variable to fix; shutdown drains requests for a bounded time.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { settlesWithin } from '../deadline.js';

/**
 * On shutdown, a request whose body has not fully arrived by then is cut off: the request timeout
 * (30 s, src/http/raw-server.ts) is longer than the shutdown deadline, so a client that sent its
 * headers and part of a body (a stalled upload) would otherwise hold its request open past it.
 */
export const UPLOAD_DRAIN_MS = 2_000;
/**
 * How long a request that has arrived whole (waiting on a lock or a failover, say) gets from the
 * signal to be answered. The delivery worker stops meanwhile (up to 5 s for its started sends), and
 * the store is closed after, within the 9 s deadline.
 */
export const REQUEST_DRAIN_MS = 7_000;
/** How long the server may take to close once every connection has been closed. */
const CONNECTIONS_CLOSED_MS = 500;

/**
 * The server's connections and their outstanding (pipelined) requests, for closeHttp. While closing,
 * each answer is followed by closing idle connections, which Node does only once, at the start; a
 * connection whose next request has started to arrive stays (it is answered 503 `shutting_down`).
 */
export class ConnectionWatch {
  private readonly connections = new Map<Socket, Set<IncomingMessage>>();
  private closing = false;

  /** Follows the connections of `server` (call it before the server listens). */
  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, new Set());
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const outstanding = this.connections.get(request.socket);
      if (!outstanding) return;
      outstanding.add(request);
      response.once('close', () => {
        outstanding.delete(request);
        // Once the response is done with its connection, which only then counts as idle.
        if (this.closing) setImmediate(() => this.server.closeIdleConnections());
      });
    });
  }

  /** The server is closing: connections that become idle from now on are closed too. */
  startClosing(): void {
    this.closing = true;
  }

  /**
   * Closes the connections none of whose requests has arrived whole: a stalled upload, or a
   * request whose headers have not all arrived. Returns how many it closed.
   */
  cutUploads(): number {
    let cut = 0;
    for (const [socket, outstanding] of this.connections) {
      if ([...outstanding].some((request) => request.complete)) continue;
      socket.destroy();
      cut++;
    }
    return cut;
  }
}

/**
 * Stops accepting, and lets in-flight requests finish: those still uploading their body for at
 * most UPLOAD_DRAIN_MS, those that have arrived whole for at most REQUEST_DRAIN_MS.
 */
export async function closeHttp(app: FastifyInstance, logger: Logger, watch: ConnectionWatch): Promise<void> {
  const closing = app.close().catch((error: unknown) => logger.error({ err: error }, 'could not close the HTTP server cleanly'));
  watch.startClosing();
  if (await settlesWithin(closing, UPLOAD_DRAIN_MS)) return;
  const cut = watch.cutUploads();
  if (cut > 0) logger.warn({ waitedMs: UPLOAD_DRAIN_MS, connections: cut }, 'uploads still running at shutdown; closing their connections');
  if (await settlesWithin(closing, REQUEST_DRAIN_MS - UPLOAD_DRAIN_MS)) return;
  logger.warn({ waitedMs: REQUEST_DRAIN_MS }, 'requests still running at shutdown; closing their connections');
  app.server.closeAllConnections();
  if (!(await settlesWithin(closing, CONNECTIONS_CLOSED_MS))) logger.warn('the HTTP server has not closed; stopping the rest anyway');
}

/** One line naming the variable to fix, for an address the server cannot listen on. */
export function listenFailure(error: unknown, config: Pick<Config, 'host' | 'port'>): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const address = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `PORT: cannot listen on ${address}: the port is already in use`;
  if (code === 'EACCES') return `PORT: cannot listen on ${address}: permission denied (ports below 1024 need privileges)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `HOST: cannot listen on ${address}: the name does not resolve (${code})`;
  if (code === 'EADDRNOTAVAIL') return `HOST: cannot listen on ${address}: not an address of this machine`;
  return `HOST: cannot listen on ${address}: ${code ?? message}`;
}

// Starting and stopping the HTTP server within the operating contract (CONTRACT.md): a listen
// failure is one line naming the variable to fix; shutdown drains requests for a bounded time.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { settlesWithin } from '../deadline.js';

/**
 * How long in-flight requests get to finish on shutdown. The server sets no request timeout, so a
 * client that sent its headers and part of a body could hold its request open past the deadline:
 * after this its connection is closed, and the worker (up to 5 s for the deliveries it has
 * started) and the store are closed in time.
 */
export const REQUEST_DRAIN_MS = 2_000;
/** How long the server may take to close once every connection has been closed. */
const CONNECTIONS_CLOSED_MS = 500;

/** Stops accepting, and lets in-flight requests finish for at most REQUEST_DRAIN_MS. */
export async function closeHttp(app: FastifyInstance, logger: Logger): Promise<void> {
  const closing = app.close().catch((error: unknown) => logger.error({ err: error }, 'could not close the HTTP server cleanly'));
  if (await settlesWithin(closing, REQUEST_DRAIN_MS)) return;
  logger.warn({ waitedMs: REQUEST_DRAIN_MS }, 'requests still running at shutdown (a stalled upload?); closing their connections');
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

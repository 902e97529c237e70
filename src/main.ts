// The entry point: configuration → services → HTTP app → listen; on SIGTERM/SIGINT stop accepting,
// finish in-flight requests and started deliveries, and exit 0 (CONTRACT.md).
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { appDeps, buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { createServices } from './services.js';
import { loadStudioProfile } from './studio/profile.js';

/** CONTRACT.md: exit within 10 s of the signal; keep a margin for the process to end. */
const SHUTDOWN_DEADLINE_MS = 9_000;
/**
 * How long in-flight requests get to finish on shutdown. The server sets no request timeout, so a
 * client that sent its headers and part of a body could hold its request open past the deadline:
 * after this its connection is closed, and the worker (up to 5 s for the deliveries it has
 * started) and the store are closed in time.
 */
const REQUEST_DRAIN_MS = 3_000;
/** How long the server may take to close once every connection has been closed. */
const CONNECTIONS_CLOSED_MS = 500;

/** Whether `promise` settles within `ms`; it runs on either way. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Stops accepting, and lets in-flight requests finish for at most REQUEST_DRAIN_MS. */
async function closeHttp(app: FastifyInstance, logger: Logger): Promise<void> {
  const closing = app.close().catch((error: unknown) => logger.error({ err: error }, 'could not close the HTTP server cleanly'));
  if (await settlesWithin(closing, REQUEST_DRAIN_MS)) return;
  logger.warn({ waitedMs: REQUEST_DRAIN_MS }, 'requests still running at shutdown (a stalled upload?); closing their connections');
  app.server.closeAllConnections();
  if (!(await settlesWithin(closing, CONNECTIONS_CLOSED_MS))) logger.warn('the HTTP server has not closed; stopping the rest anyway');
}

/** One line naming the variable to fix, for an address the server cannot listen on. */
function listenFailure(error: unknown, config: Pick<Config, 'host' | 'port'>): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const address = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `PORT: cannot listen on ${address}: the port is already in use`;
  if (code === 'EACCES') return `PORT: cannot listen on ${address}: permission denied (ports below 1024 need privileges)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `HOST: cannot listen on ${address}: the name does not resolve (${code})`;
  if (code === 'EADDRNOTAVAIL') return `HOST: cannot listen on ${address}: not an address of this machine`;
  return `HOST: cannot listen on ${address}: ${code ?? message}`;
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  let profile: ReturnType<typeof loadStudioProfile>;
  try {
    config = loadConfig();
    profile = loadStudioProfile(config.studioProfilePath);
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `STUDIO_PROFILE: ${(error as Error).message}`;
    process.stderr.write(`studio-inquiry: invalid configuration: ${message}\n`);
    process.exit(1);
  }

  const logger = createLogger(config.logLevel);
  let services: Awaited<ReturnType<typeof createServices>>;
  try {
    services = await createServices(config, profile, logger);
  } catch (error) {
    const message =
      error instanceof Error && error.message.startsWith('DATABASE_URL') ? error.message : 'DATABASE_URL: cannot open the database';
    logger.fatal({ err: error }, message);
    process.stderr.write(`studio-inquiry: ${message}\n`);
    process.exit(1);
  }
  if (services.channels.length === 0) {
    logger.warn(
      'no delivery channel is configured (set SMTP_URL and INQUIRY_TO, or WEBHOOK_URL): inquiries are stored in the inbox only; read them with `npm run inquiries -- list`',
    );
  }
  if (config.webhook && !config.webhook.secret) {
    logger.warn('WEBHOOK_SECRET is not set: webhook requests are sent unsigned');
  }

  const app = await buildApp(appDeps({ config, logger, profile }, services));
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const message = listenFailure(error, config);
    logger.fatal({ err: error }, message);
    process.stderr.write(`studio-inquiry: ${message}\n`);
    await closeHttp(app, logger);
    await services.close();
    process.exit(1);
  }
  // Only once the service serves: a start-up that fails has sent nothing (inquiries committed
  // meanwhile are found by the worker's first claim).
  await services.worker.start();
  logger.info(
    { publicUrl: config.publicUrl, database: config.database.kind, channels: services.channels.map((c) => c.name) },
    'studio-inquiry is ready',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests and deliveries');
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await closeHttp(app, logger);
    await services.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

await main();

// The entry point: configuration → services → HTTP app → listen; on SIGTERM/SIGINT stop accepting,
// finish in-flight requests and started deliveries, and exit 0 (docs/operations.md).
import { appDeps, buildApp } from './app.js';
import { databaseErrorCause } from './cli/inbox.js';
import { describeRetention, formatRetentionPeriod } from './config/retention.js';
import { ConfigError, loadConfig, oneLine } from './config.js';
import { ConnectionWatch, closeHttp, listenFailure } from './http/lifecycle.js';
import { createLogger } from './logger.js';
import { createServices } from './services.js';
import { loadStudioProfile } from './studio/profile.js';

/** Exit within 10 s of the signal (test/e2e/process.test.ts); keep a margin for the process to end. */
const SHUTDOWN_DEADLINE_MS = 9_000;
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  let profile: ReturnType<typeof loadStudioProfile>;
  try {
    config = loadConfig();
    profile = loadStudioProfile(config.studioProfilePath);
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `STUDIO_PROFILE: ${(error as Error).message}`;
    process.stderr.write(`studio-inquiry: invalid configuration: ${oneLine(message)}\n`);
    process.exit(1);
  }

  const logger = createLogger(config.logLevel);
  let services: Awaited<ReturnType<typeof createServices>>;
  try {
    services = await createServices(config, profile, logger);
  } catch (error) {
    const message =
      error instanceof Error && /^(DATABASE_URL|SIGNING_KEY_SECRET):/.test(error.message)
        ? error.message
        : 'DATABASE_URL: cannot open the database';
    logger.fatal({ err: error }, message);
    process.stderr.write(`studio-inquiry: ${oneLine(message)}\n`);
    process.exit(1);
  }
  for (const warning of config.warnings) logger.warn(warning);
  const { inbox, spam } = config.retention;
  logger.info(
    { retention: { inbox: formatRetentionPeriod(inbox), spam: formatRetentionPeriod(spam) } },
    describeRetention(config.retention),
  );

  const app = await buildApp(appDeps({ config, logger, profile }, services));
  const connections = new ConnectionWatch(app.server);
  /** A start-up that cannot go on: one line naming the variable, everything opened closed, exit 1. */
  const failStart = async (error: unknown, message: string): Promise<never> => {
    logger.fatal({ err: error }, message);
    process.stderr.write(`studio-inquiry: ${oneLine(message)}\n`);
    await closeHttp(app, logger, connections);
    await services.close(); // the worker's stop first
    process.exit(1);
  };
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await failStart(error, listenFailure(error, config));
  }
  // Only once the service serves: a start-up that fails has sent nothing (inquiries committed
  // meanwhile are found by the worker's first claim). Its first write (on SQLite, the leases a
  // killed process left) is the first of the service's: a database it cannot write stops it here.
  try {
    await services.worker.start();
  } catch (error) {
    await failStart(error, `DATABASE_URL: cannot write to the database (${databaseErrorCause(error)})`);
  }
  services.digests.start();
  services.alerts.start();
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
    // Requests and deliveries finish side by side; the store closes once both are done.
    await Promise.all([closeHttp(app, logger, connections), services.worker.stop()]);
    await services.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

await main();

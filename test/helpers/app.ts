// Builds the real application through the same factories as src/main.ts, on a temporary SQLite file,
// with configuration read by the real loadConfig from an environment given by the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { appDeps, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { RetryPolicy } from '../../src/delivery/backoff.js';
import type { DeliveryPacer } from '../../src/delivery/pacing.js';
import type { AuthRateLimits } from '../../src/http/routes/agent-auth.js';
import { createServices, type Services } from '../../src/services.js';
import { loadStudioProfile, type StudioProfile } from '../../src/studio/profile.js';
import { freePort } from './process.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly config: Config;
  readonly profile: StudioProfile;
  readonly dir: string;
  /** Base URL when started with `listen: true`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

const GENEROUS = { max: 10_000, timeWindow: 60_000 };
const GENEROUS_AUTH_LIMITS: AuthRateLimits = {
  register: GENEROUS,
  claim: GENEROUS,
  token: GENEROUS,
  revoke: GENEROUS,
  authorize: GENEROUS,
};
/** The page's tests load it many times a minute from one address. */
const GENEROUS_CHALLENGES = GENEROUS;
/** Every test's codes go to a few example domains: only the tests of the caps (agent-auth-mail-caps) keep the real one. */
const GENEROUS_CODES_PER_DOMAIN = [{ max: 10_000, windowMs: 60_000 }];

export const FAST_RETRY: RetryPolicy = { baseMs: 40, capMs: 200, windowMs: 60_000 };

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'studio-inquiry-test-'));
}

export interface TestAppOptions {
  readonly env?: Record<string, string>;
  readonly retry?: RetryPolicy;
  readonly listen?: boolean;
  /** Reuse a directory (and so a database) from an earlier app. */
  readonly dir?: string;
  readonly startWorker?: boolean;
  /** Where log lines go (default: nowhere, LOG_LEVEL=silent). */
  readonly logLines?: string[];
  /** Agent-auth rate limits (default: high enough for any test; a test of the limits sets its own). */
  readonly authRateLimits?: AuthRateLimits;
  /** The limit on proof-of-work challenges per address (default: high enough for any test). */
  readonly challengeRateLimit?: { max: number; timeWindow: number };
  /** The port to listen on with `listen: true` (default: any free one). */
  readonly port?: number;
  /** How often the delivery worker looks for due deliveries when nothing wakes it (default: 50 ms). */
  readonly pollIntervalMs?: number;
  /** The services' clock (default: the system's): a test moves it on to see what time alone changes. */
  readonly now?: () => Date;
  /** The delivery worker's pacer (default: the production pace on the real clock). */
  readonly pacer?: DeliveryPacer;
  /** How long a request may take to arrive (default: the service's). */
  readonly requestTimeoutMs?: number;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = options.dir ?? tempDir();
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(dir, 'studio.db')}`,
    RATE_LIMIT_INQUIRIES: 'off',
    // Off unless a test turns it on: the other tests' inquiries (names with addresses, many links)
    // test other things; test/e2e/quarantine.test.ts tests the filter.
    SPAM_FILTER: 'off',
    // And no digest of the quarantine on a schedule unless a test asks (test/e2e/quarantine-digest.test.ts).
    SPAM_DIGEST: 'off',
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://localhost:3000',
    ...options.env,
  });
  const profile = loadStudioProfile(config.studioProfilePath);
  const logLines = options.logLines;
  const logger = logLines
    ? pino({ level: config.logLevel }, { write: (line: string) => void logLines.push(line) })
    : pino({ level: config.logLevel });
  const services = await createServices(config, profile, logger, {
    retry: options.retry ?? FAST_RETRY,
    pollIntervalMs: options.pollIntervalMs ?? 50,
    codesPerDomain: GENEROUS_CODES_PER_DOMAIN,
    ...(options.now && { now: options.now }),
    ...(options.pacer && { pacer: options.pacer }),
  });
  const app = await buildApp({
    ...appDeps({ config, logger, profile }, services),
    authRateLimits: options.authRateLimits ?? GENEROUS_AUTH_LIMITS,
    challengeRateLimit: options.challengeRateLimit ?? GENEROUS_CHALLENGES,
    ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
  });
  let baseUrl = '';
  if (options.listen) baseUrl = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  else await app.ready();
  // As in src/main.ts: the worker starts once the service serves.
  if (options.startWorker !== false) {
    await services.worker.start();
    services.digests.start();
    services.alerts.start();
  }
  let closed = false;
  return {
    app,
    services,
    config,
    profile,
    dir,
    baseUrl,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await services.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A free local port and its base URL, for an app whose PUBLIC_URL must be the address it serves. */
export async function reserveBaseUrl(): Promise<{ port: number; base: string }> {
  const port = await freePort();
  return { port, base: `http://127.0.0.1:${port}` };
}

export const validInquiry = (overrides: Record<string, unknown> = {}) => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: 'Analytical Engines Ltd',
  message: 'We need a new website for our engine.',
  ...overrides,
});

export const REFERENCE_IN_TEXT = /INQ-[0-9A-HJKMNP-TV-Z]{6}/;

export function referenceOf(text: string): string {
  const match = REFERENCE_IN_TEXT.exec(text);
  if (!match) throw new Error(`no reference in "${text}"`);
  return match[0];
}

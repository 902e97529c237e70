// The composition root below HTTP: store, outbox channels, delivery worker and the inquiry service,
// built from the configuration. The entry point, the CLI and the tests all start here.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { agentIdentities } from './auth/agent-identity.js';
import { withCodes } from './auth/claim-code-mail.js';
import { createClaims, OTP_DIGITS } from './auth/claims.js';
import type { MetadataDocumentOptions } from './auth/client-metadata-document.js';
import { createIdJagVerifier } from './auth/id-jag.js';
import { SigningKeys } from './auth/keys.js';
import { CODES_PER_DOMAIN, type SendLimit } from './auth/limits.js';
import { type AgentAuth, createAgentAuth } from './auth/service.js';
import { createSignIn, type SignIn } from './auth/sign-in.js';
import { authUrls } from './auth/urls.js';
import type { Config } from './config.js';
import { alertRoutes, createDeliveryAlerts, type DeliveryAlerts } from './delivery/alerts.js';
import type { RetryPolicy } from './delivery/backoff.js';
import type { Channel } from './delivery/channel.js';
import { createEmailChannel } from './delivery/email.js';
import type { DeliveryPacer } from './delivery/pacing.js';
import { createWebhookChannel } from './delivery/webhook.js';
import { DeliveryWorker } from './delivery/worker.js';
import { type Access, createAccess } from './inbox/access.js';
import { withLinkTokens } from './inbox/link-token.js';
import { createInboxService, type InboxService } from './inbox/service.js';
import { createInquiryService, type InquiryService } from './inquiries/service.js';
import { createMaintenance, type Maintenance } from './maintenance.js';
import { createMetrics, type Metrics } from './metrics.js';
import { contentReader } from './spam/content-reader.js';
import { digestRoute } from './spam/digest.js';
import { createDigestSchedule, type DigestSchedule } from './spam/digest-schedule.js';
import { loadProofOfWork, type ProofOfWork } from './spam/proof-of-work.js';
import { openDatabase } from './storage/database.js';
import { createInboxStore } from './storage/inbox-store.js';
import { createPersonalDataStore } from './storage/personal-data-store.js';
import type { Store } from './storage/ports.js';
import { createStore } from './storage/store.js';
import type { StudioProfile } from './studio/profile.js';

export interface Services {
  readonly store: Store;
  readonly keys: SigningKeys;
  readonly auth: AgentAuth;
  /** The authorization-code flow: registered clients, the consent, its tokens. */
  readonly signIn: SignIn;
  readonly channels: readonly Channel[];
  readonly worker: DeliveryWorker;
  readonly inquiries: InquiryService;
  /** The daily quarantine digest: started with the worker (src/main.ts). */
  readonly digests: DigestSchedule;
  /** The delivery alerts (src/delivery/alerts.ts): started with the worker (src/main.ts). */
  readonly alerts: DeliveryAlerts;
  /** The contact page's proof of work: challenges, and the check of their answers. */
  readonly proofOfWork: ProofOfWork;
  readonly metrics: Metrics;
  /** The hourly maintenance (src/maintenance.ts), started with the services. */
  readonly maintenance: Maintenance;
  /** The studio's inbox at /inbox (docs/inbox.md): who may sign in, and what it does; null without INBOX_USERS or INQUIRY_TO. */
  readonly inbox: { readonly access: Access; readonly service: InboxService } | null;
  /** The Redis client of REDIS_URL (shared rate limits), or null. */
  readonly redis: Redis | null;
  /** Stops the worker (letting started deliveries finish), then closes channels and the store. */
  close(): Promise<void>;
}

/**
 * How long a rate-limit check (well under a millisecond) waits for Redis. The limiters let a request
 * through when Redis fails, but a Redis that stops answering without closing its connections fails
 * nothing: without this, every request would wait on it for good.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The shared rate limits' Redis: commands fail after REDIS_COMMAND_TIMEOUT_MS (the limiters then let
 * requests through); a connection silent for twice that is replaced, so commands do not pile up to be
 * counted at once when it wakes. An outage is logged once, and its end too.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    socketTimeout: 2 * REDIS_COMMAND_TIMEOUT_MS,
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) logger.warn({ err: error }, 'Redis is not answering; rate limits are not enforced meanwhile');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('Redis answers again; rate limits are shared again');
    down = false;
  });
  return redis;
}

export interface ServiceOptions {
  readonly retry?: RetryPolicy;
  readonly pollIntervalMs?: number;
  readonly now?: () => Date;
  /** The worker's pacer (default: the production pace on the monotonic clock); null never paces. */
  readonly pacer?: DeliveryPacer | null;
  /** The cap on codes mailed to one domain (default CODES_PER_DOMAIN): a test not about it lifts it. */
  readonly codesPerDomain?: readonly SendLimit[];
  /** How Client ID Metadata Documents are fetched (tests: a local https server's CA, loopback allowed). */
  readonly clientMetadata?: MetadataDocumentOptions;
}

/**
 * The email channel with each claim code and sign-in link put into its mail as it is sent
 * (src/auth/claim-code-mail.ts, src/inbox/link-token.ts).
 */
export function withClaimCodes(channel: Channel, codeKey: string, linkKey = ''): Channel {
  return {
    ...channel,
    send: (delivery, payload) =>
      channel.send(
        delivery,
        payload.kind === 'message'
          ? {
              ...payload,
              message: { ...payload.message, body: withLinkTokens(withCodes(payload.message.body, codeKey, OTP_DIGITS), linkKey) },
            }
          : payload,
      ),
  };
}

function createChannels(config: Config, profile: StudioProfile, store: Store): Channel[] {
  const channels: Channel[] = [];
  if (config.smtp) {
    channels.push(
      createEmailChannel({
        smtpUrl: config.smtp.url,
        // The studio's name unless MAIL_FROM gives one (docs/configuration.md).
        from: { name: config.mailFrom.name ?? profile.name, address: config.mailFrom.address },
        to: config.smtp.inquiryTo,
        profile,
        timeZone: config.studioTimeZone,
        publicUrl: config.publicUrl,
        findAgent: (clientId) => store.auth.findClient(clientId),
      }),
    );
  }
  if (config.webhook) {
    const { url, secret } = config.webhook;
    channels.push(createWebhookChannel({ url, secret, identify: agentIdentities(store) }));
  }
  return channels;
}

export async function createServices(
  config: Config,
  profile: StudioProfile,
  logger: Logger,
  options: ServiceOptions = {},
): Promise<Services> {
  const opened = await openDatabase(config.database, { logger });
  const store = createStore(opened);
  const keys = await SigningKeys.load(store, new Date(), Date.now, config.keySecrets);
  const now = options.now ?? (() => new Date());
  const proofOfWork = await loadProofOfWork(store.proofs, now);
  // The claim codes' key: made by the first instance, shared through the database like the proof of work's.
  const codeKey = await store.proofs.secret('claim-code-key', randomBytes(32).toString('base64url'));
  // The inbox's sign-in links' key, shared likewise (src/inbox/link-token.ts).
  const linkKey = await store.proofs.secret('inbox-link-key', randomBytes(32).toString('base64url'));
  const channels = createChannels(config, profile, store).map((channel) =>
    channel.name === 'email' ? withClaimCodes(channel, codeKey, linkKey) : channel,
  );
  const metrics = createMetrics(store.outbox, { channels: channels.map((channel) => channel.name), logger });
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
  const worker = new DeliveryWorker({
    onDelivered: (channel, seconds) => metrics.deliveryLatency.observe({ channel }, seconds),
    store,
    channels,
    logger: logger.child({ component: 'delivery' }),
    releaseLeasesOnStart: store.dialect === 'sqlite',
    leaseMs: config.deliveryLeaseMs,
    ...(options.retry && { retry: options.retry }),
    ...(options.pollIntervalMs !== undefined && { pollIntervalMs: options.pollIntervalMs }),
    ...(options.now && { now: options.now }),
    ...(options.pacer !== undefined && { pacer: options.pacer }),
  });
  const claims = createClaims({
    store,
    studioName: profile.name,
    emailChannel: channels.some((channel) => channel.name === 'email') ? 'email' : null,
    now,
    codeKey,
    onCodeQueued: () => worker.wake(),
    serviceMailPerHour: config.serviceMailLimit,
    ...(options.codesPerDomain && { codesPerDomain: options.codesPerDomain }),
  });
  const auth = createAgentAuth({
    store,
    claims,
    keys,
    urls: authUrls(config.publicUrl),
    idJag: createIdJagVerifier({
      audience: authUrls(config.publicUrl).issuer,
      trustedIssuers: config.trustedIssuers,
      useAssertion: (issuer, jti, expiresAt) => store.auth.useAssertion(issuer, jti, expiresAt),
      ...(options.now && { now: options.now }),
    }),
    ...(options.now && { now: options.now }),
  });
  const signIn = createSignIn({
    store,
    keys,
    urls: authUrls(config.publicUrl),
    studioName: profile.name,
    now,
    mail: {
      emailChannel: channels.some((channel) => channel.name === 'email') ? 'email' : null,
      codeKey,
      caps: { serviceMailPerHour: config.serviceMailLimit, perDomain: options.codesPerDomain ?? CODES_PER_DOMAIN },
      onCodeQueued: () => worker.wake(),
    },
    ...(options.clientMetadata && { clientMetadata: options.clientMetadata }),
  });
  const spamFilter = config.spamFilter && {
    ...config.spamFilter,
    reader: contentReader({
      onThreadStart: () => logger.info({ component: 'spam' }, 'the spam rules thread started'),
      onThreadDeath: (why, givenUp) =>
        logger.warn(
          { err: why, component: 'spam' },
          givenUp
            ? 'the spam rules thread keeps dying: the rules now run on the event loop'
            : 'the spam rules thread died; the next inquiry starts another',
        ),
    }),
  };
  const inquiries = createInquiryService({
    store,
    channels: channels.map((channel) => channel.name),
    onEnqueued: () => worker.enqueued(),
    onAccepted: (outcome) => metrics.inquiries.inc({ outcome }),
    spamFilter,
    onJudged: (judgement) => metrics.judged(judgement),
    ...(options.now && { now: options.now }),
  });
  const digests = createDigestSchedule({
    store,
    route: digestRoute({ inquiryTo: config.smtp?.inquiryTo ?? null, webhook: config.webhook !== null }),
    hourUtc: config.spamDigest?.hourUtc ?? null,
    logger: logger.child({ component: 'digest' }),
    now,
    onQueued: ({ channel }) => {
      metrics.digests.inc({ channel });
      worker.wake();
    },
  });
  const alerts = createDeliveryAlerts({
    store,
    channels: channels.map((channel) => channel.name),
    routes: alertRoutes({ inquiryTo: config.smtp?.inquiryTo ?? null, webhook: config.webhook !== null }),
    timeZone: config.studioTimeZone,
    logger: logger.child({ component: 'alerts' }),
    now,
    onQueued: () => worker.wake(),
  });
  const inboxStore = createInboxStore(opened);
  const emailChannel = channels.some((channel) => channel.name === 'email') ? 'email' : null;
  const inbox = config.inbox && {
    access: createAccess({
      store,
      inbox: inboxStore,
      users: config.inbox.users,
      emailChannel,
      studioName: profile.name,
      signInUrl: `${config.publicUrl}/inbox/sign-in`,
      linkKey,
      now,
      onQueued: () => worker.wake(),
    }),
    service: createInboxService({
      store,
      inbox: inboxStore,
      personalData: createPersonalDataStore(opened),
      channels: channels.map((channel) => channel.name),
      wake: () => worker.wake(),
      eraseWaitMs: config.deliveryLeaseMs,
      now,
    }),
  };
  const maintenance = createMaintenance({
    store,
    inbox: inboxStore,
    retention: config.retention,
    now,
    logger: logger.child({ component: 'maintenance' }),
    onDeleted: metrics.deleted,
  });
  maintenance.start();
  return {
    store,
    keys,
    auth,
    signIn,
    channels,
    worker,
    inquiries,
    digests,
    alerts,
    proofOfWork,
    metrics,
    maintenance,
    inbox,
    redis,
    async close() {
      await maintenance.stop();
      await digests.stop();
      await alerts.stop();
      await worker.stop();
      await spamFilter?.reader.close();
      await Promise.all(channels.map((channel) => channel.close?.()));
      await store.close();
      redis?.disconnect();
    },
  };
}

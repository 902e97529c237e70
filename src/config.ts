// Reads the environment once, validates it and returns a frozen, typed configuration.
// The only module that touches process.env; every variable is in docs/configuration.md.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { DEFAULT_SERVICE_MAIL_PER_HOUR } from './auth/limits.js';
import { ConfigError } from './config/errors.js';
import { EMAIL_ADDRESS, type MailFrom, parseMailFrom, parseTimeZone } from './config/mail.js';
import { parseRetention, type RetentionConfig } from './config/retention.js';
import { type KeySecretsConfig, parseKeySecrets } from './config/secrets.js';
import { parseSpamDigest, parseSpamFilter, type SpamDigestConfig, type SpamFilterConfig } from './config/spam.js';

export { ConfigError, oneLine } from './config/errors.js';

export type DatabaseConfig = { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };

export interface RateLimitConfig {
  readonly max: number;
  readonly windowMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** The interface's {base_url}, without a trailing slash. */
  readonly publicUrl: string;
  readonly database: DatabaseConfig;
  readonly smtp: { readonly url: string; readonly inquiryTo: string } | null;
  /** MAIL_FROM: the display name null where it gives none (the studio's name is used then). */
  readonly mailFrom: MailFrom;
  /** STUDIO_TIMEZONE: the IANA zone the notification mail writes times in. */
  readonly studioTimeZone: string;
  readonly webhook: { readonly url: string; readonly secret: string | null } | null;
  readonly studioProfilePath: string | null;
  readonly trustedIssuers: Readonly<Record<string, string>>;
  readonly rateLimitInquiries: RateLimitConfig | null;
  readonly trustProxy: boolean | number | string[];
  readonly corsOrigins: '*' | readonly string[];
  readonly logLevel: string;
  /** Redis for rate limits shared by every instance; null = per-process limits. */
  readonly redisUrl: string | null;
  /** RETENTION_INBOX and RETENTION_SPAM: how long inquiries of each verdict are kept (src/config/retention.ts). */
  readonly retention: RetentionConfig;
  /** Bearer token that opens GET /metrics; without it /metrics is not served. */
  readonly metricsToken: string | null;
  /** How long a claimed delivery stays with its instance before another may take it over. */
  readonly deliveryLeaseMs: number;
  /** SERVICE_MAIL_LIMIT: claim codes the service mails in any hour, to anyone (never inquiries). */
  readonly serviceMailLimit: number;
  /** SPAM_FILTER and SPAM_THRESHOLD: inquiries scoring the threshold or more are quarantined; null = filter off. */
  readonly spamFilter: SpamFilterConfig | null;
  /** SPAM_DIGEST and SPAM_DIGEST_HOUR: the daily digest of the quarantine; null = off (docs/spam.md). */
  readonly spamDigest: SpamDigestConfig | null;
  /** SIGNING_KEY_SECRET (and _PREVIOUS): seals the token-signing private keys at rest; null = stored in clear. */
  readonly keySecrets: KeySecretsConfig;
  /** Settings that are valid but do less than they may seem to: logged as warnings at start-up. */
  readonly warnings: readonly string[];
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/**
 * Bounds of DELIVERY_LEASE_SECONDS. A live worker renews the leases of what it is sending, so the
 * lease only decides how soon a crashed or cut-off instance's deliveries are taken over: a few
 * seconds is enough for tests, and past an hour they would wait too long.
 */
const DELIVERY_LEASE_SECONDS_MIN = 5;
const DELIVERY_LEASE_SECONDS_MAX = 3_600;
/** Bounds of SERVICE_MAIL_LIMIT: each code sent reads up to this many earlier sends. */
const SERVICE_MAIL_LIMIT_MAX = 10_000;
const WINDOW_UNITS_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
// A deliberately simple address check: the mail library does the real parsing.

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const port = parsePort(read('PORT') ?? '3000');
  const host = parseHost(read('HOST') ?? '0.0.0.0');
  if (port === 0 && read('PUBLIC_URL') === undefined) {
    // Any free port: the service could not say where it is (discovery, token issuer, links).
    throw new ConfigError('PORT', '0 (any free port) needs PUBLIC_URL set, the address clients reach the service at');
  }
  const publicUrl = parsePublicUrl(read('PUBLIC_URL') ?? `http://localhost:${port}`);
  const smtpUrl = read('SMTP_URL');
  const inquiryTo = read('INQUIRY_TO');
  const webhookUrl = read('WEBHOOK_URL');
  const webhookSecret = read('WEBHOOK_SECRET');
  const profilePath = read('STUDIO_PROFILE') ?? null;
  const redisUrl = read('REDIS_URL');

  if (smtpUrl !== undefined) parseServerUrl('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  if (smtpUrl !== undefined && inquiryTo === undefined) {
    throw new ConfigError('INQUIRY_TO', 'is required when SMTP_URL is set (the mailbox that receives inquiries)');
  }
  if (inquiryTo !== undefined && !EMAIL_ADDRESS.test(inquiryTo)) {
    throw new ConfigError('INQUIRY_TO', `"${inquiryTo}" is not an email address`);
  }
  if (webhookUrl !== undefined) parseWebhookUrl(webhookUrl);
  if (webhookSecret !== undefined) parseWebhookSecret(webhookSecret);
  if (profilePath !== null) assertReadable('STUDIO_PROFILE', profilePath);

  const config: Config = {
    port,
    host,
    publicUrl,
    database: parseDatabaseUrl(read('DATABASE_URL') ?? 'sqlite:data/studio.db'),
    smtp: smtpUrl !== undefined && inquiryTo !== undefined ? { url: smtpUrl, inquiryTo } : null,
    mailFrom: parseMailFrom(read('MAIL_FROM'), publicUrl),
    studioTimeZone: parseTimeZone(read('STUDIO_TIMEZONE')),
    webhook: webhookUrl !== undefined ? { url: webhookUrl, secret: webhookSecret ?? null } : null,
    studioProfilePath: profilePath,
    trustedIssuers: parseTrustedIssuers(read('TRUSTED_ISSUERS')),
    rateLimitInquiries: parseRateLimit('RATE_LIMIT_INQUIRIES', read('RATE_LIMIT_INQUIRIES') ?? '5/10m'),
    trustProxy: parseTrustProxy(read('TRUST_PROXY') ?? 'false'),
    corsOrigins: parseCorsOrigins(read('CORS_ORIGINS'), publicUrl),
    logLevel: parseLogLevel(read('LOG_LEVEL') ?? 'info'),
    metricsToken: parseMetricsToken(read('METRICS_TOKEN')),
    redisUrl: redisUrl === undefined ? null : parseServerUrl('REDIS_URL', redisUrl, ['redis:', 'rediss:']).href,
    retention: parseRetention(read('RETENTION_INBOX'), read('RETENTION_SPAM')),
    deliveryLeaseMs: parseDeliveryLeaseSeconds(read('DELIVERY_LEASE_SECONDS') ?? '120') * 1_000,
    serviceMailLimit: parseServiceMailLimit(read('SERVICE_MAIL_LIMIT') ?? String(DEFAULT_SERVICE_MAIL_PER_HOUR)),
    spamFilter: parseSpamFilter(read('SPAM_FILTER'), read('SPAM_THRESHOLD')),
    spamDigest: parseSpamDigest(read('SPAM_DIGEST'), read('SPAM_DIGEST_HOUR')),
    keySecrets: parseKeySecrets(read('SIGNING_KEY_SECRET'), read('SIGNING_KEY_SECRET_PREVIOUS')),
    warnings: Object.freeze(
      [
        smtpUrl === undefined &&
          webhookUrl === undefined &&
          'no delivery channel is configured (set SMTP_URL and INQUIRY_TO, or WEBHOOK_URL): inquiries are stored in the inbox only; read them with `npm run inquiries -- list`',
        smtpUrl === undefined && inquiryTo !== undefined && 'INQUIRY_TO is set but SMTP_URL is not: no email is sent',
        smtpUrl === undefined && read('MAIL_FROM') !== undefined && 'MAIL_FROM is set but SMTP_URL is not: no email is sent',
        webhookUrl !== undefined && webhookSecret === undefined && 'WEBHOOK_SECRET is not set: webhook requests are sent unsigned',
        webhookUrl === undefined && webhookSecret !== undefined && 'WEBHOOK_SECRET is set but WEBHOOK_URL is not: no webhook is sent',
        read('SIGNING_KEY_SECRET') === undefined &&
          'SIGNING_KEY_SECRET is not set: the token-signing private keys are stored unencrypted in the database',
        read('SPAM_DIGEST') === 'off' &&
          read('SPAM_DIGEST_HOUR') !== undefined &&
          'SPAM_DIGEST_HOUR is set but SPAM_DIGEST is off: no digest is sent on a schedule',
      ].filter((warning) => warning !== false),
    ),
  };
  return Object.freeze(config);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new ConfigError('PORT', `"${value}" is not a TCP port (0-65535)`);
  }
  return port;
}

function parseUrl(variable: string, value: string, protocols: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, 'is not a valid URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(variable, `unsupported scheme "${url.protocol}" (expected ${protocols.join(' or ')})`);
  }
  return url;
}

/** The URL of a server: with a host (`redis:foo` and `redis://` name none, and a client would quietly try localhost). */
function parseServerUrl(variable: string, value: string, protocols: readonly string[]): URL {
  const url = parseUrl(variable, value, protocols);
  if (url.hostname === '') throw new ConfigError(variable, `names no host (expected ${protocols[0]}//host[:port])`);
  return url;
}

function parseHttpUrl(variable: string, value: string): string {
  return parseUrl(variable, value, ['http:', 'https:']).href;
}

/**
 * A listen address: an IP address, or a host name by RFC 1123 §2.1 (labels of 1-63 letters, digits
 * and inner hyphens; 253 characters in all), not all digits in its last label (RFC 3696 §2:
 * "999.1.1.1" is a mistyped address). Whether it resolves is for listen() to find out.
 */
function parseHost(value: string): string {
  const name = value.replace(/\.$/, '');
  const labels = name.split('.');
  const isHostName =
    name.length <= 253 &&
    labels.every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label)) &&
    !/^\d+$/.test(labels.at(-1) ?? '');
  if (isIP(value) === 0 && !isHostName) {
    throw new ConfigError('HOST', `"${value}" is not an IP address or a host name (such as 0.0.0.0, :: or localhost)`);
  }
  return value;
}

/**
 * The {base_url} every link is built on, so it must take a path appended: no query or fragment (a
 * link would land inside them) and no user name or password (every discovery document would show
 * them). Without a trailing slash.
 */
function parsePublicUrl(value: string): string {
  const url = parseUrl('PUBLIC_URL', value, ['http:', 'https:']);
  // The serialised URL keeps "?" and "#" even when what follows them is empty.
  if (/[?#]/.test(url.href)) {
    throw new ConfigError('PUBLIC_URL', 'must not have a query or fragment (expected scheme://host[:port][/path])');
  }
  refuseCredentials('PUBLIC_URL', url);
  // A path is where a proxy serves the service (docs/operations.md); it becomes part of
  // routes and links, so it is kept to plain segments.
  if (!/^(\/[A-Za-z0-9._~-]+)*\/?$/.test(url.pathname)) {
    throw new ConfigError(
      'PUBLIC_URL',
      'its path may hold only letters, digits and . _ ~ - between slashes (expected scheme://host[:port][/path])',
    );
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Where inquiries are posted. A user name or password in it could not be sent (fetch refuses such
 * a URL) and would reach the logs and the deliveries' last error with every failed attempt: the
 * receiver authenticates the service by the signature (WEBHOOK_SECRET) instead.
 */
function parseWebhookUrl(value: string): void {
  refuseCredentials('WEBHOOK_URL', parseUrl('WEBHOOK_URL', value, ['http:', 'https:']));
}

/** Credentials in a URL the service publishes or logs would be shown to whoever reads them. */
function refuseCredentials(variable: string, url: URL): void {
  if (url.username !== '' || url.password !== '') throw new ConfigError(variable, 'must not contain a user name or password');
}

export function parseDatabaseUrl(value: string): DatabaseConfig {
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:data/studio.db');
    return { kind: 'sqlite', path };
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    parseUrl('DATABASE_URL', value, ['postgres:', 'postgresql:']);
    return { kind: 'postgres', url: value };
  }
  throw new ConfigError('DATABASE_URL', 'unknown scheme (expected sqlite:<path> or postgres://user:pass@host:port/db)');
}

/** Standard Webhooks: a key of 24 to 64 random bytes; this many at least, or a receiver's library may refuse it. */
const WEBHOOK_KEY_MIN_BYTES = 24;

function parseWebhookSecret(value: string): void {
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : '';
  // Padded base64, as the receivers' libraries decode it (the reference one refuses "abc"): the
  // decoded bytes written back must give the key as it stands.
  const bytes = Buffer.from(key, 'base64');
  if (key === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(key) || bytes.toString('base64') !== key) {
    throw new ConfigError('WEBHOOK_SECRET', 'must be "whsec_" followed by a padded base64 key');
  }
  if (bytes.length < WEBHOOK_KEY_MIN_BYTES) {
    throw new ConfigError(
      'WEBHOOK_SECRET',
      `the key is ${bytes.length} bytes; use at least ${WEBHOOK_KEY_MIN_BYTES} random bytes, e.g. "whsec_$(openssl rand -base64 32)"`,
    );
  }
}

function assertReadable(variable: string, path: string): void {
  try {
    readFileSync(path);
  } catch {
    throw new ConfigError(variable, `cannot read the file "${path}"`);
  }
}

function parseTrustedIssuers(value: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError('TRUSTED_ISSUERS', 'is not valid JSON (expected {"<issuer>":"<jwks url>"})');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('TRUSTED_ISSUERS', 'must be a JSON object mapping an issuer to its JWKS URL');
  }
  const issuers: Record<string, string> = {};
  for (const [issuer, jwks] of Object.entries(parsed)) {
    if (typeof jwks !== 'string') throw new ConfigError('TRUSTED_ISSUERS', `the JWKS URL of "${issuer}" is not a string`);
    issuers[issuer] = parseHttpUrl('TRUSTED_ISSUERS', jwks);
  }
  return issuers;
}

export function parseRateLimit(variable: string, value: string): RateLimitConfig | null {
  if (value === 'off') return null;
  const match = /^(\d+)\/(\d*)([smh])$/.exec(value);
  const max = Number(match?.[1]);
  const count = match?.[2] === '' ? 1 : Number(match?.[2]);
  const unit = match?.[3] ?? '';
  if (!match || max < 1 || count < 1) {
    throw new ConfigError(variable, `"${value}" is not a rate such as 5/10m, 100/h or off`);
  }
  return { max, windowMs: count * (WINDOW_UNITS_MS[unit] ?? 0) };
}

function parseTrustProxy(value: string): boolean | number | string[] {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => {
    const entry = part.trim();
    // An address or CIDR range (as proxy-addr takes them), or one of its names for reserved ranges.
    const [address = '', prefix, ...rest] = entry.split('/');
    if (prefix !== undefined && /^0+$/.test(prefix)) {
      // proxy-addr refuses a /0 range when the app is built: said here, in one line, as for any other value.
      throw new ConfigError('TRUST_PROXY', `"${entry}" is a /0 range: to trust every address, use true`);
    }
    const validPrefix = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (isIP(address) === 6 ? 128 : 32));
    if (!(PROXY_RANGE_NAMES.includes(entry) || (isIP(address) !== 0 && validPrefix && rest.length === 0))) {
      throw new ConfigError(
        'TRUST_PROXY',
        `"${entry}" is not true, false, a hop count, an IP address, a CIDR range or loopback/linklocal/uniquelocal`,
      );
    }
    return entry;
  });
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function parseCorsOrigins(value: string | undefined, publicUrl: string): '*' | string[] {
  if (value === '*') return '*';
  if (value === undefined) return [new URL(publicUrl).origin];
  return value.split(',').map((origin) => {
    const trimmed = origin.trim();
    const url = parseUrl('CORS_ORIGINS', trimmed, ['http:', 'https:']);
    if (url.origin !== trimmed.replace(/\/$/, '')) {
      throw new ConfigError('CORS_ORIGINS', `"${trimmed}" is not an origin (scheme://host[:port])`);
    }
    return url.origin;
  });
}

function parseMetricsToken(value: string | undefined): string | null {
  if (value === undefined) return null;
  // A guessable token would put the metrics on the public surface after all.
  if (value.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long');
  // What a header can carry as sent: other characters reach the service in whatever bytes the
  // scraper chose, and could never match.
  if (!/^[\x21-\x7e]+$/.test(value)) throw new ConfigError('METRICS_TOKEN', 'must be visible ASCII characters only (no spaces)');
  return value;
}

function parseDeliveryLeaseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < DELIVERY_LEASE_SECONDS_MIN || seconds > DELIVERY_LEASE_SECONDS_MAX) {
    throw new ConfigError(
      'DELIVERY_LEASE_SECONDS',
      `"${value}" is not a whole number of seconds from ${DELIVERY_LEASE_SECONDS_MIN} to ${DELIVERY_LEASE_SECONDS_MAX}`,
    );
  }
  return seconds;
}

function parseServiceMailLimit(value: string): number {
  const perHour = Number(value);
  if (!/^\d+$/.test(value) || perHour < 1 || perHour > SERVICE_MAIL_LIMIT_MAX) {
    throw new ConfigError('SERVICE_MAIL_LIMIT', `"${value}" is not a whole number of codes per hour from 1 to ${SERVICE_MAIL_LIMIT_MAX}`);
  }
  return perHour;
}

function parseLogLevel(value: string): string {
  if (!LOG_LEVELS.includes(value)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return value;
}

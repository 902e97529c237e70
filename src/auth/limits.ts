// Size and rate limits of the agent-auth endpoints, and the limits on the claim codes they mail, in
// one place for the routes, the claims and auth.md.

/** Registration and token bodies are small (docs/agent-auth.md). */
export const AUTH_BODY_LIMIT_BYTES = 16 * 1024;
export type RateLimit = { readonly max: number; readonly timeWindow: number };
export type AuthRateLimits = Readonly<Record<'register' | 'claim' | 'token' | 'revoke' | 'authorize', RateLimit>>;

/** Per client address. Registrations are rare; tokens last an hour, so a minute's budget is ample. */
export const AUTH_RATE_LIMITS: AuthRateLimits = {
  register: { max: 20, timeWindow: 60 * 60 * 1000 },
  /** Starting a claim mails a code: kept low, on top of the 5 wrong codes a claim allows. */
  claim: { max: 10, timeWindow: 15 * 60 * 1000 },
  token: { max: 60, timeWindow: 60 * 1000 },
  revoke: { max: 60, timeWindow: 60 * 1000 },
  /** The sign-in page and its form: a person needs a handful of requests; codes have their own caps. */
  authorize: { max: 60, timeWindow: 15 * 60 * 1000 },
} as const;

const per = (ms: number): string => (ms >= 3_600_000 ? `${ms / 3_600_000} h` : `${ms / 60_000} min`);

/** "20 per 1 h" for the documentation. */
export const describeLimit = ({ max, timeWindow }: RateLimit): string => `${max} per ${per(timeWindow)}`;

/** At most `max` sends in any `windowMs`, counted from the database (so across instances). */
export type SendLimit = { readonly max: number; readonly windowMs: number };

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * Claim codes mailed to one mailbox (canonicalRecipient), whoever asks, on any instance: per-IP
 * limits do not stop many addresses from mailing one stranger without end (and bulk mail marks the
 * studio's domain as spam). A person needs one code, rarely a third; ten a day bound the rest.
 */
export const CODES_PER_RECIPIENT: readonly SendLimit[] = [
  { max: 3, windowMs: 15 * MINUTE_MS },
  { max: 10, windowMs: DAY_MS },
];

/**
 * Codes one claim is mailed a day, to whichever addresses: starting a claim again (a lost mail, a
 * mistyped address) is normal a few times, but one claim token must not mail stranger after stranger.
 */
export const CODES_PER_CLAIM: readonly SendLimit[] = [{ max: 5, windowMs: DAY_MS }];

/**
 * Codes mailed to one domain (gmail.com, a company's), to whichever of its addresses: many addresses
 * at one provider must not make the studio's mail look like bulk mail there. A studio's agents are
 * claimed a few at a time, so this stays far above what people need.
 */
export const CODES_PER_DOMAIN: readonly SendLimit[] = [
  { max: 10, windowMs: 15 * MINUTE_MS },
  { max: 50, windowMs: DAY_MS },
];

/** SERVICE_MAIL_LIMIT's default: codes the service mails in an hour, to anyone (docs/configuration.md). */
export const DEFAULT_SERVICE_MAIL_PER_HOUR = 200;

/** All the codes the service mails, `perHour` (SERVICE_MAIL_LIMIT) in any hour. */
export const serviceMailLimits = (perHour: number): readonly SendLimit[] => [{ max: perHour, windowMs: 60 * MINUTE_MS }];

/** "3 per 15 min, 10 per 24 h" for the documentation. */
export const describeSendLimits = (limits: readonly SendLimit[]): string =>
  limits.map(({ max, windowMs }) => describeLimit({ max, timeWindow: windowMs })).join(', ');

/** The longest window above: how long a sent code must be remembered. */
export const CODE_SEND_MEMORY_MS = Math.max(
  ...[...CODES_PER_RECIPIENT, ...CODES_PER_CLAIM, ...CODES_PER_DOMAIN, ...serviceMailLimits(1)].map((limit) => limit.windowMs),
);

/**
 * How long until one more send fits every limit (0: now), given the times of earlier sends, newest
 * first (at least the `max` newest of the longest window). A send counts while less than its window
 * has passed; the wait is until the `max`-th newest leaves it.
 */
export function waitBeforeNextSend(sentNewestFirst: readonly Date[], limits: readonly SendLimit[], now: Date): number {
  let wait = 0;
  for (const { max, windowMs } of limits) {
    const oldestThatCounts = sentNewestFirst[max - 1];
    if (oldestThatCounts === undefined) continue;
    wait = Math.max(wait, oldestThatCounts.getTime() + windowMs - now.getTime());
  }
  return wait;
}

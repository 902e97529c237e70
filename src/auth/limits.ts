// Size and rate limits of the agent-auth endpoints, in one place for the routes and for auth.md.

/** design/agent-auth.md §1: registration and token bodies are small. */
export const AUTH_BODY_LIMIT_BYTES = 16 * 1024;
export type RateLimit = { readonly max: number; readonly timeWindow: number };
export type AuthRateLimits = Readonly<Record<'register' | 'claim' | 'token' | 'revoke', RateLimit>>;

/** Per client address. Registrations are rare; tokens last an hour, so a minute's budget is ample. */
export const AUTH_RATE_LIMITS: AuthRateLimits = {
  register: { max: 20, timeWindow: 60 * 60 * 1000 },
  /** Starting a claim mails a code: kept low, on top of the 5 wrong codes a claim allows. */
  claim: { max: 10, timeWindow: 15 * 60 * 1000 },
  token: { max: 60, timeWindow: 60 * 1000 },
  revoke: { max: 60, timeWindow: 60 * 1000 },
} as const;

const per = (ms: number): string => (ms >= 3_600_000 ? `${ms / 3_600_000} h` : `${ms / 60_000} min`);

/** "20 per 1 h" for the documentation. */
export const describeLimit = ({ max, timeWindow }: RateLimit): string => `${max} per ${per(timeWindow)}`;

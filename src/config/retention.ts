// RETENTION_INBOX and RETENTION_SPAM: how long inquiries of each verdict are kept before the hourly
// maintenance deletes them (docs/operations.md, "Personal data"), in days or calendar months, or off.
import { ConfigError } from './errors.js';

/** A retention period: `amount` days or calendar months. */
export interface RetentionPeriod {
  readonly amount: number;
  readonly unit: 'd' | 'm';
}

/** How long inquiries are kept, by verdict; null = kept for good. */
export interface RetentionConfig {
  readonly inbox: RetentionPeriod | null;
  readonly spam: RetentionPeriod | null;
}

export const DEFAULT_RETENTION = { inbox: 'off', spam: '30d' } as const;

/** The largest periods: a century, past which a cutoff is no different from off. */
const MAX_AMOUNT: Record<RetentionPeriod['unit'], number> = { d: 36_500, m: 1_200 };
const DAY_MS = 24 * 60 * 60 * 1000;

/** Parses one variable's value (trimmed; undefined where unset): `off`, `<n>d` or `<n>m`. */
export function parseRetentionPeriod(variable: string, value: string): RetentionPeriod | null {
  if (value === 'off') return null;
  const match = /^([1-9]\d{0,5})([dm])$/.exec(value);
  const unit = match?.[2] as RetentionPeriod['unit'] | undefined;
  const amount = Number(match?.[1]);
  if (unit === undefined || amount > MAX_AMOUNT[unit]) {
    throw new ConfigError(
      variable,
      `"${value}" is not a retention period such as 365d, 24m or off (1 to ${MAX_AMOUNT.d} days, or 1 to ${MAX_AMOUNT.m} months)`,
    );
  }
  return Object.freeze({ amount, unit });
}

export function parseRetention(inbox: string | undefined, spam: string | undefined): RetentionConfig {
  return Object.freeze({
    inbox: parseRetentionPeriod('RETENTION_INBOX', inbox ?? DEFAULT_RETENTION.inbox),
    spam: parseRetentionPeriod('RETENTION_SPAM', spam ?? DEFAULT_RETENTION.spam),
  });
}

/** The period as it is written in the environment: `off`, `30d`, `24m`. */
export const formatRetentionPeriod = (period: RetentionPeriod | null): string =>
  period === null ? 'off' : `${period.amount}${period.unit}`;

/**
 * The instant before which an inquiry received has been kept for `period` at `now`: days of 24
 * hours, or calendar months in UTC (a day of the month the earlier month lacks is its last day).
 */
export function retentionCutoff(period: RetentionPeriod, now: Date): Date {
  if (period.unit === 'd') return new Date(now.getTime() - period.amount * DAY_MS);
  const cutoff = new Date(now.getTime());
  const day = cutoff.getUTCDate();
  cutoff.setUTCDate(1);
  cutoff.setUTCMonth(cutoff.getUTCMonth() - period.amount);
  const lastDay = new Date(Date.UTC(cutoff.getUTCFullYear(), cutoff.getUTCMonth() + 1, 0)).getUTCDate();
  cutoff.setUTCDate(Math.min(day, lastDay));
  return cutoff;
}

/** The start-up line saying what is kept and for how long. */
export function describeRetention({ inbox, spam }: RetentionConfig): string {
  const part = (what: string, period: RetentionPeriod | null) => {
    if (period === null) return `${what} kept`;
    const unit = period.unit === 'd' ? 'day' : 'month';
    return `${what} deleted after ${period.amount} ${unit}${period.amount === 1 ? '' : 's'}`;
  };
  return `retention: ${part('inbox inquiries', inbox)}, ${part('spam inquiries', spam)}`;
}

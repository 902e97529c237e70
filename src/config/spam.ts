// The spam settings (docs/configuration.md): the filter and its threshold, and the daily digest of
// the quarantine (docs/spam.md).
import { DEFAULT_SPAM_THRESHOLD } from '../spam/weights.js';
import { ConfigError } from './errors.js';

/** Bounds of SPAM_THRESHOLD: above 0 (at 0 every inquiry would be spam), at most the largest score worth setting. */
const SPAM_THRESHOLD_MAX = 100;

/**
 * The UTC hour the daily digest goes out at: 08:00 UTC is the start of the working day in Europe
 * and Africa and before it in the Americas, so the digest waits in the inbox when the studio opens.
 */
export const DEFAULT_SPAM_DIGEST_HOUR = 8;

export interface SpamFilterConfig {
  readonly threshold: number;
}

export interface SpamDigestConfig {
  /** The hour of the day, in UTC, from which each day's digest is due. */
  readonly hourUtc: number;
}

/** SPAM_FILTER (on|off, default on) and SPAM_THRESHOLD; null when the filter is off. */
export function parseSpamFilter(filter = 'on', threshold = String(DEFAULT_SPAM_THRESHOLD)): SpamFilterConfig | null {
  if (filter !== 'on' && filter !== 'off') throw new ConfigError('SPAM_FILTER', `"${filter}" is neither on nor off`);
  const score = Number(threshold);
  if (!/^\d+(\.\d+)?$/.test(threshold) || score <= 0 || score > SPAM_THRESHOLD_MAX) {
    throw new ConfigError('SPAM_THRESHOLD', `"${threshold}" is not a score above 0 and at most ${SPAM_THRESHOLD_MAX} (such as 4 or 5.5)`);
  }
  return filter === 'on' ? Object.freeze({ threshold: score }) : null;
}

/** SPAM_DIGEST (daily|off, default daily) and SPAM_DIGEST_HOUR (0-23, UTC); null when the digest is off. */
export function parseSpamDigest(digest = 'daily', hour = String(DEFAULT_SPAM_DIGEST_HOUR)): SpamDigestConfig | null {
  if (digest !== 'daily' && digest !== 'off') throw new ConfigError('SPAM_DIGEST', `"${digest}" is neither daily nor off`);
  if (!/^\d{1,2}$/.test(hour) || Number(hour) > 23) {
    throw new ConfigError('SPAM_DIGEST_HOUR', `"${hour}" is not an hour of the day from 0 to 23 (UTC)`);
  }
  return digest === 'daily' ? Object.freeze({ hourUtc: Number(hour) }) : null;
}

// RETENTION_INBOX and RETENTION_SPAM: the defaults, the periods accepted, one clear error naming the
// variable for anything else, and the cutoff each period gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeRetention,
  formatRetentionPeriod,
  parseRetention,
  parseRetentionPeriod,
  type RetentionPeriod,
  retentionCutoff,
} from '../../src/config/retention.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('RETENTION_INBOX and RETENTION_SPAM', () => {
  it('keep the inbox and delete spam after 30 days by default', () => {
    expect(loadConfig({}).retention).toEqual({ inbox: null, spam: { amount: 30, unit: 'd' } });
    expect(describeRetention(loadConfig({}).retention)).toBe('retention: inbox inquiries kept, spam inquiries deleted after 30 days');
  });

  it.each<[string, RetentionPeriod | null]>([
    ['off', null],
    ['365d', { amount: 365, unit: 'd' }],
    [' 24m ', { amount: 24, unit: 'm' }],
    ['1d', { amount: 1, unit: 'd' }],
    ['36500d', { amount: 36_500, unit: 'd' }],
    ['1200m', { amount: 1_200, unit: 'm' }],
  ])('take %j', (value, period) => {
    const { retention } = loadConfig({ RETENTION_INBOX: value, RETENTION_SPAM: value });
    expect(retention).toEqual({ inbox: period, spam: period });
  });

  it.each(['0d', '36501d', '1201m', '30', 'd', '30D', '30w', '-1d', '1.5d', '030d', '30 d', 'never', '1e3d', '٣٠d', '9999999999d'])(
    'refuse %j with one line naming the variable',
    (value) => {
      for (const variable of ['RETENTION_INBOX', 'RETENTION_SPAM']) {
        const error = (() => {
          try {
            loadConfig({ [variable]: value });
          } catch (thrown) {
            return thrown;
          }
        })();
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe(variable);
        expect((error as Error).message).toMatch(new RegExp(`^${variable}: ".*" is not a retention period such as 365d, 24m or off`));
      }
    },
  );

  it('give for any value either a ConfigError naming the variable, on one line, or a period written as the value was', () => {
    const likely = fc
      .tuple(fc.integer({ min: -3, max: 40_000 }), fc.constantFrom('d', 'm', 'D', 'y', ''), fc.constantFrom('', ' ', '0'))
      .map(([amount, unit, pad]) => `${pad}${amount}${unit}`);
    const value = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), likely, fc.constant('off'));
    fc.assert(
      fc.property(value, (text) => {
        let period: RetentionPeriod | null;
        try {
          period = parseRetentionPeriod('RETENTION_SPAM', text);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          expect((error as ConfigError).variable).toBe('RETENTION_SPAM');
          expect((error as Error).message.startsWith('RETENTION_SPAM: ')).toBe(true);
          expect((error as Error).message).not.toMatch(/[\n\r\u2028\u2029]/);
          return;
        }
        expect(formatRetentionPeriod(period)).toBe(text);
        if (period !== null) {
          expect(Number.isInteger(period.amount) && period.amount >= 1).toBe(true);
          expect(period.amount).toBeLessThanOrEqual(period.unit === 'd' ? 36_500 : 1_200);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('describe the retention in force for the start-up line', () => {
    expect(describeRetention(parseRetention('24m', '1d'))).toBe(
      'retention: inbox inquiries deleted after 24 months, spam inquiries deleted after 1 day',
    );
    expect(describeRetention(parseRetention('1m', 'off'))).toBe('retention: inbox inquiries deleted after 1 month, spam inquiries kept');
  });
});

describe('retentionCutoff', () => {
  it('counts days of 24 hours, and calendar months in UTC ending on the month’s last day where the day is missing', () => {
    const at = new Date('2026-03-01T12:00:00Z');
    expect(retentionCutoff({ amount: 30, unit: 'd' }, at)).toEqual(new Date('2026-01-30T12:00:00Z'));
    expect(retentionCutoff({ amount: 24, unit: 'm' }, at)).toEqual(new Date('2024-03-01T12:00:00Z'));
    expect(retentionCutoff({ amount: 1, unit: 'm' }, new Date('2024-03-31T08:30:00Z'))).toEqual(new Date('2024-02-29T08:30:00Z'));
    expect(retentionCutoff({ amount: 12, unit: 'm' }, new Date('2024-02-29T00:00:00Z'))).toEqual(new Date('2023-02-28T00:00:00Z'));
    expect(retentionCutoff({ amount: 1_200, unit: 'm' }, at)).toEqual(new Date('1926-03-01T12:00:00Z'));
  });

  it('puts n months between 28n and 31n days back, each month further back than the one before', () => {
    const instant = fc.date({ min: new Date('2000-01-01Z'), max: new Date('2100-01-01Z'), noInvalidDate: true });
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 1_199 }), (now, months) => {
        const cutoff = retentionCutoff({ amount: months, unit: 'm' }, now).getTime();
        const back = now.getTime() - cutoff;
        expect(back).toBeGreaterThanOrEqual(28 * months * DAY_MS);
        expect(back).toBeLessThanOrEqual(31 * months * DAY_MS);
        expect(retentionCutoff({ amount: months + 1, unit: 'm' }, now).getTime()).toBeLessThan(cutoff);
      }),
    );
  });
});

// The CLI's delivery columns: each delivery's state and attempts, and the last error of those that
// have one, kept to one short, terminal-safe line in the `list` table.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvField, deliverySummary, lastErrors, table } from '../../src/cli/format.js';
import type { DeliveryRecord } from '../../src/storage/store.js';

const delivery = (overrides: Partial<DeliveryRecord>): DeliveryRecord => ({
  id: 'd',
  reference: 'INQ-AAAAA1',
  channel: 'email',
  status: 'succeeded',
  attempts: 1,
  runAt: new Date(0),
  lastError: null,
  queuedAt: new Date(0),
  finishedAt: new Date(0),
  ...overrides,
});

describe('delivery columns of `list`', () => {
  it('give each state with its attempts, and the last error of each delivery that has one', () => {
    const deliveries = [
      delivery({ channel: 'email', status: 'pending', attempts: 3, lastError: 'SMTP CONN: connect ECONNREFUSED 127.0.0.1:25' }),
      delivery({ channel: 'webhook', status: 'failed', attempts: 1, lastError: 'webhook answered HTTP 410' }),
    ];
    expect(deliverySummary(deliveries)).toBe('email:pending(3) webhook:failed(1)');
    expect(lastErrors(deliveries)).toBe('email: SMTP CONN: connect ECONNREFUSED 127.0.0.1:25; webhook: webhook answered HTTP 410');
    expect(lastErrors([delivery({})])).toBe('-');
    expect(lastErrors([])).toBe('-');
  });

  it('keep a long or hostile error to one short line in the table', () => {
    const error = `SMTP DATA: 451 ${'x'.repeat(200)}\n\u001b[2Jcleared`;
    const [, row] = table(
      ['DELIVERIES', 'LAST ERROR'],
      [['email:pending(2)', lastErrors([delivery({ status: 'pending', lastError: error })])]],
    )
      .trimEnd()
      .split('\n');
    const lastError = row?.split('  ').at(-1) ?? '';
    expect(lastError).toMatch(/^email: SMTP DATA: 451 x+…$/);
    expect(lastError.length).toBeLessThanOrEqual(40);
    expect(row).not.toContain('\u001b');
  });
});

describe('CSV fields of `export`', () => {
  it('quote any field a spreadsheet could split, on commas or on semicolons (the list separator in some locales)', () => {
    expect(csvField('x;=1+2;')).toBe('"x;=1+2;"');
    fc.assert(
      fc.property(fc.string(), (value) => {
        const field = csvField(value);
        if (/[,;"\r\n]/.test(field)) {
          expect(field.startsWith('"') && field.endsWith('"')).toBe(true);
          // Inside the quotes, every quote is doubled: the field ends where the spreadsheet expects.
          expect(field.slice(1, -1).replace(/""/g, '')).not.toContain('"');
        }
      }),
    );
  });
});

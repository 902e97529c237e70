// The CLI's text: the delivery columns (each delivery's state and attempts, and the last error of
// those that have one, kept to one short, terminal-safe line in the `list` table), CSV fields, the
// dates --since takes, and the one line that says why the database or the output failed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  csvField,
  csvRecord,
  deliveryCsvCell,
  deliverySummary,
  lastErrors,
  parseInstant,
  printable,
  printableLine,
  systemErrorText,
  table,
} from '../../src/cli/format.js';
import { databaseErrorCause, schemaProblem, withoutPassword } from '../../src/cli/inbox.js';
import type { DeliveryRecord } from '../../src/storage/ports.js';

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

describe('text a visitor wrote, shown in a terminal', () => {
  it('keeps to its line in a field of `show`: a line break cannot write what reads as another field', () => {
    const forged = 'Ada\nEmail     evil@attacker.example\r\nCompany\t';
    expect(printableLine(forged)).toBe('Ada\\u000aEmail     evil@attacker.example\\u000aCompany\\u0009');
    expect(printableLine(forged)).not.toMatch(/[\n\r\t]/);
    // A message keeps its lines.
    expect(printable('Line one\nLine two')).toBe('Line one\nLine two');
  });

  it('shows every bidi control and line separator as its escape', () => {
    for (const char of ['\u061c', '\u200e', '\u200f', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029', '\u001b', '\u009b']) {
      expect(printable(`a${char}b`)).toBe(`a\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    }
  });

  it('shortens a table cell by characters, never inside one, and aligns the columns by characters', () => {
    const name = `ab${'\u{1F600}'.repeat(60)}`;
    const lines = table(
      ['NAME', 'NEXT'],
      [
        [name, 'x'],
        ['Ada', 'y'],
      ],
    )
      .trimEnd()
      .split('\n');
    const [, first = '', second = ''] = lines;
    expect(first).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/); // no half of an emoji
    expect([...(first.split('  ')[0] ?? '')]).toHaveLength(40);
    expect([...first].indexOf('x')).toBe([...second].indexOf('y'));
  });
});

describe('CSV fields of `export`', () => {
  it('leave the deliveries cell empty for an inquiry without deliveries', () => {
    expect(deliveryCsvCell([])).toBeNull();
    expect(csvRecord(['INQ-AAAAA1', deliveryCsvCell([])])).toBe('INQ-AAAAA1,\r\n');
    expect(deliveryCsvCell([delivery({})])).toBe('email:succeeded');
  });

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

describe('dates of --since', () => {
  it('read a day, or a date-time without a zone, as UTC', () => {
    expect(parseInstant('2025-01-31')?.toISOString()).toBe('2025-01-31T00:00:00.000Z');
    expect(parseInstant('2026-11-24T15:21:40')?.toISOString()).toBe('2026-11-24T15:21:40.000Z');
    expect(parseInstant('2026-11-24T15:21')?.toISOString()).toBe('2026-11-24T15:21:00.000Z');
    expect(parseInstant('2026-11-24 15:21:40.25')?.toISOString()).toBe('2026-11-24T15:21:40.250Z');
  });

  it('apply a zone given as Z or an offset', () => {
    expect(parseInstant('2026-11-24T15:21:40.123456Z')?.toISOString()).toBe('2026-11-24T15:21:40.123Z');
    expect(parseInstant('2026-11-24T15:21:40+01:00')?.toISOString()).toBe('2026-11-24T14:21:40.000Z');
    expect(parseInstant('2026-11-24T00:30-0530')?.toISOString()).toBe('2026-11-24T06:00:00.000Z');
    expect(parseInstant('2026-01-01T00:00+14')?.toISOString()).toBe('2025-12-31T10:00:00.000Z');
    expect(parseInstant('0099-06-01')?.toISOString()).toBe('0099-06-01T00:00:00.000Z');
  });

  it('refuse a day or time that does not exist, and anything not ISO', () => {
    for (const text of [
      '2025-02-30',
      '2025-02-29',
      '2100-02-29',
      '2025-04-31',
      '2025-13-01',
      '2025-00-10',
      '2025-01-00',
      '2025-01-31T24:00',
      '2025-01-31T23:60',
      '2025-01-31T23:59:60',
      '2025-01-31T09:00+24:00',
      '2025-01-31T09:00+01:',
      '2025-1-31',
      '5',
      '31/01/2025',
      '2025-01-31T09',
      '2025-01-31Z',
    ]) {
      expect(parseInstant(text), text).toBeUndefined();
    }
    expect(parseInstant('2024-02-29')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(parseInstant('2000-02-29')?.toISOString()).toBe('2000-02-29T00:00:00.000Z');
  });

  it('read back every time the CLI prints, without its zone too', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        (date) => {
          expect(parseInstant(date.toISOString())?.getTime()).toBe(date.getTime());
          expect(parseInstant(date.toISOString().slice(0, -1))?.getTime()).toBe(date.getTime());
        },
      ),
    );
  });
});

describe('why the database or the output failed, in one line', () => {
  const system = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);

  it('names the network failure and the address', () => {
    expect(
      databaseErrorCause(system('connect ECONNREFUSED 127.0.0.1:5999', { code: 'ECONNREFUSED', address: '127.0.0.1', port: 5999 })),
    ).toBe('connection refused at 127.0.0.1:5999');
    // How Node reports a host name with several addresses (happy eyeballs): an AggregateError without a message.
    const both = new AggregateError(
      [
        system('connect ECONNREFUSED ::1:5999', { code: 'ECONNREFUSED', address: '::1', port: 5999 }),
        system('connect ECONNREFUSED 127.0.0.1:5999', { code: 'ECONNREFUSED', address: '127.0.0.1', port: 5999 }),
      ],
      '',
    );
    expect(databaseErrorCause(both)).toBe('connection refused at ::1:5999');
    expect(databaseErrorCause(system('getaddrinfo ENOTFOUND db.invalid', { code: 'ENOTFOUND', hostname: 'db.invalid' }))).toBe(
      'unknown host db.invalid',
    );
    expect(databaseErrorCause(system('getaddrinfo EAI_AGAIN db.example', { code: 'EAI_AGAIN', hostname: 'db.example' }))).toBe(
      'cannot look up the host db.example (DNS did not answer)',
    );
  });

  it("gives the database's own words, on their first line", () => {
    expect(databaseErrorCause(system('database "x" does not exist', { code: '3D000' }))).toBe('database "x" does not exist');
    expect(databaseErrorCause(system('file is not a database', { code: 'SQLITE_NOTADB' }))).toBe('file is not a database');
    expect(databaseErrorCause(new Error('Connection terminated due to connection timeout\n    at Client'))).toBe(
      'Connection terminated due to connection timeout',
    );
  });

  it('never shows the password of DATABASE_URL', () => {
    const config = { kind: 'postgres', url: 'postgres://studio:p%40ss@db.example:5432/inbox' } as const;
    expect(withoutPassword('cannot parse postgres://studio:p%40ss@db.example and p@ss', config)).toBe(
      'cannot parse postgres://studio:***@db.example and ***',
    );
    expect(withoutPassword('p@ss', { kind: 'sqlite', path: 'p@ss' })).toBe('p@ss');
  });

  it('says what a write to the output ran into', () => {
    expect(systemErrorText(system('ENOSPC: no space left on device, write', { code: 'ENOSPC' }))).toBe('no space left on device');
    expect(systemErrorText(system('EIO: i/o error, write', { code: 'EIO' }))).toBe('i/o error');
  });
});

describe("the inbox's schema", () => {
  const expected = ['001_a', '002_b', '003_c'];

  it('is fine at this release, and otherwise says what to do', () => {
    expect(schemaProblem({ applied: expected, expected }, 'x.db')).toBeUndefined();
    expect(schemaProblem({ applied: [], expected }, 'x.db')).toBe('no inbox at x.db (no studio-inquiry tables); check the address');
    expect(schemaProblem({ applied: ['20240101_other_app'], expected }, 'x.db')).toMatch(/^no inbox at x\.db/);
    expect(schemaProblem({ applied: ['001_a', '002_b'], expected }, 'x.db')).toBe(
      "the inbox's schema is at version 2, this release expects 3: run the service once to upgrade it",
    );
    expect(schemaProblem({ applied: [...expected, '004_d'], expected }, 'x.db')).toBe(
      "the inbox's schema is at version 4, this release knows up to 3: a newer release has upgraded it (migration 004_d); use that release's CLI",
    );
  });
});

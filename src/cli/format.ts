// Text in and out of the CLI: terminal-safe strings, a plain aligned table, delivery summaries, CSV,
// the dates options take, and errors in words. Nothing here touches the store or the process.
import type { DeliveryRecord } from '../storage/ports.js';

export { csvField, csvRecord, deliveryCsvCell, deliverySummary } from '../inquiries/export-format.js';

/** The longest cell a table shows; the full value is in `show` and `--json`. */
const TABLE_CELL_MAX_LENGTH = 40;

// The public writes inquiries, so a name or message may carry terminal escape sequences or bidi
// overrides that make text read otherwise than stored: human-readable output shows them as \u
// escapes; --json and CSV are data and keep the exact stored text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point here.
const UNSAFE_FOR_TERMINAL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Terminal-safe text; line breaks and tabs stay (a message's lines). */
export function printable(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(UNSAFE_FOR_TERMINAL, escaped);
}

/**
 * Terminal-safe text on one line: a line break or tab in a name, a company or an address is shown
 * as its escape too, so that nobody can write what reads as another field of `show` (a second
 * "Email" line) into a form.
 */
export function printableLine(text: string): string {
  return printable(text).replace(/[\n\t]/g, escaped);
}

/** One line of terminal-safe text, shortened to fit a table column (by characters, never inside one). */
function cell(text: string): string {
  const characters = [...printable(text).replace(/[\n\t]/g, ' ')];
  return characters.length > TABLE_CELL_MAX_LENGTH ? `${characters.slice(0, TABLE_CELL_MAX_LENGTH - 1).join('')}…` : characters.join('');
}

/** How many characters `text` is (code points: an emoji is one, not two UTF-16 units). */
const characterCount = (text: string) => [...text].length;

export function iso(date: Date | null): string {
  return date === null ? '-' : date.toISOString();
}

// 2025-01-31, 2025-01-31T09:00, 2025-01-31T09:00:00.250+01:00 (RFC 3339 also allows a space for the T).
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;
const MS_PER_MINUTE = 60_000;

/**
 * An ISO 8601 date or date-time as an instant, or undefined when it names no real day or time (Date
 * alone takes 2025-02-30 for March 2nd). Without a zone it is UTC, like every time the CLI prints, so
 * a command means the same instant on every machine.
 */
export function parseInstant(text: string): Date | undefined {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return undefined;
  const field = (group: number) => Number(match[group] ?? 0);
  const [year, month, day, hour, minute, second] = [field(1), field(2), field(3), field(4), field(5), field(6)];
  const [zoneHours, zoneMinutes] = [field(10), field(11)];
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0); // day 0 of the next month: the last day of this one
  const real = month >= 1 && month <= 12 && day >= 1 && day <= date.getUTCDate() && hour <= 23 && minute <= 59 && second <= 59;
  if (!real || zoneHours > 23 || zoneMinutes > 59) return undefined;
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number((match[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const offsetMinutes = (match[9] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  return new Date(date.getTime() - offsetMinutes * MS_PER_MINUTE);
}

/**
 * A system error in words: "no space left on device" for Node's "ENOSPC: no space left on device,
 * write"; any other error's first line.
 */
export function systemErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0] ?? '';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return line;
  return /^[A-Z]+: (.+?)(?:, \w+(?: '.*')?)?$/.exec(line)?.[1] ?? (line || code);
}

/** A left-aligned table with a header row, columns separated by two spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows].map((row) => row.map(cell));
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => characterCount(row[column] ?? ''))));
  const lines = cells.map((row) =>
    row
      .map((value, column) => value + ' '.repeat((widths[column] ?? 0) - characterCount(value)))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `webhook: webhook answered HTTP 400`: the last error of each delivery that has one (waiting for a
 * retry, failed or dead; a success clears it), or `-`. A table shortens it; `show` gives it in full.
 */
export function lastErrors(deliveries: readonly DeliveryRecord[]): string {
  const errors = deliveries.flatMap(({ channel, lastError }) => (lastError === null ? [] : [`${channel}: ${lastError}`]));
  return errors.length === 0 ? '-' : errors.join('; ');
}

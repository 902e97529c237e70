// The formats inquiries are exported in, shared by the CLI's export and the inbox's: a delivery
// summary per inquiry, and CSV (RFC 4180) guarded against formula injection.
import type { DeliveryRecord, InquiryRecord } from '../storage/ports.js';

/**
 * `email:succeeded webhook:pending(3)`: each channel's status, with the number of attempts made
 * unless it is the ordinary case of a delivery that succeeded on its first attempt.
 */
export function deliverySummary(deliveries: readonly DeliveryRecord[]): string {
  if (deliveries.length === 0) return '-';
  return deliveries
    .map(({ channel, status, attempts }) => {
      const count = attempts === 0 || (status === 'succeeded' && attempts === 1) ? '' : `(${attempts})`;
      return `${channel}:${status}${count}`;
    })
    .join(' ');
}

/** The deliveries column of `export --format csv`: empty for none (a "-" would be taken, and guarded, as text). */
export function deliveryCsvCell(deliveries: readonly DeliveryRecord[]): string | null {
  return deliveries.length === 0 ? null : deliverySummary(deliveries);
}

// OWASP CSV injection: a spreadsheet runs a cell starting with =, +, - or @ (tab or CR can hide the
// start) as a formula, so a visitor's `=HYPERLINK(...)` would run when the studio opens the export.
// Such cells get a leading apostrophe, which spreadsheets read as "text" and do not display.
const FORMULA_START = /^[=+\-@\t\r]/;
// RFC 4180 §2: a field containing a double quote, comma or line break is enclosed in double quotes,
// and a double quote inside it is doubled. A semicolon too: where it is the list separator (German,
// French spreadsheets), "x;=1+2" unquoted would be split into cells, the second a formula.
const NEEDS_QUOTES = /[",;\r\n]/;

export function csvField(value: string | null): string {
  if (value === null || value === '') return '';
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One CSV record, ended with CRLF as RFC 4180 asks. */
export function csvRecord(values: readonly (string | null)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The columns of an export as CSV (the CLI's adds the verdict after them, the inbox's the status and source). */
export const CSV_HEADER = ['reference', 'receivedAt', 'firstName', 'lastName', 'email', 'company', 'message', 'clientId', 'deliveries'];

/** An inquiry's values under CSV_HEADER. */
export function csvValues(inquiry: InquiryRecord, deliveries: readonly DeliveryRecord[]): (string | null)[] {
  const { reference, receivedAt, firstName, lastName, email, company, message, clientId } = inquiry;
  return [reference, receivedAt.toISOString(), firstName, lastName, email, company, message, clientId, deliveryCsvCell(deliveries)];
}

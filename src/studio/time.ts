// A time as the studio reads it, in its time zone (STUDIO_TIMEZONE): in words for the mail, short
// for the inbox's lists and tables.

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** E.g. "Friday 27 November 2026 at 14:05 (Europe/London)". */
export function studioTime(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    formatIn(timeZone)
      .formatToParts(at)
      .map(({ type, value }) => [type, value]),
  );
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year} at ${parts.hour}:${parts.minute} (${timeZone})`;
}

const shortFormats = new Map<string, Intl.DateTimeFormat>();

/** E.g. "2026-11-27 14:05 GMT": the inbox's lists and tables, to the minute, the zone abbreviated. */
export function studioTimeShort(at: Date, timeZone: string): string {
  let format = shortFormats.get(timeZone);
  if (format === undefined) {
    const fields = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' } as const;
    format = new Intl.DateTimeFormat('en-GB', { timeZone, ...fields, hourCycle: 'h23', timeZoneName: 'short' });
    shortFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map(({ type, value }) => [type, value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`;
}

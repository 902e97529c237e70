// The studio's mail settings (docs/configuration.md): MAIL_FROM, and STUDIO_TIMEZONE, the zone the
// mail, the alerts and the inbox write times in.
import { ConfigError } from './errors.js';

export const EMAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

/** From of every mail: the display name null where MAIL_FROM gives none (the studio's name is used). */
export interface MailFrom {
  readonly name: string | null;
  readonly address: string;
}

/** MAIL_FROM (`address` or `Name <address>`), or no-reply@ the host of PUBLIC_URL without a name. */
export function parseMailFrom(value: string | undefined, publicUrl: string): MailFrom {
  if (value === undefined) return { name: null, address: `no-reply@${new URL(publicUrl).hostname}` };
  const bracketed = /^(.*)<([^>]*)>\s*$/.exec(value);
  const address = (bracketed?.[2] ?? value).trim();
  if (!EMAIL_ADDRESS.test(address)) {
    throw new ConfigError('MAIL_FROM', `"${value}" is not an address such as "Studio <no-reply@example.com>"`);
  }
  const name = (bracketed?.[1] ?? '')
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .trim();
  if (/\p{Cc}/u.test(name)) throw new ConfigError('MAIL_FROM', 'the display name must be one line, without control characters');
  return { name: name === '' ? null : name, address };
}

/** STUDIO_TIMEZONE: an IANA time zone name such as Europe/London, as Intl knows it (its canonical spelling); UTC by default. */
export function parseTimeZone(value: string | undefined): string {
  if (value === undefined) return 'UTC';
  // Names only: Intl would also take an offset such as +01:00, which knows no summer time.
  if (/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value)) {
    try {
      return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone;
    } catch {
      // not a zone Intl knows: the error below
    }
  }
  throw new ConfigError('STUDIO_TIMEZONE', `"${value}" is not an IANA time zone name such as "Europe/London" or "America/New_York"`);
}

// The inbox's users (docs/inbox.md): INBOX_USERS, a comma-separated list of addresses, by default
// INQUIRY_TO; none at all means no inbox (GET /inbox answers 404).
import { ConfigError } from './errors.js';

// The same deliberately simple check as INQUIRY_TO's: the mail library does the real parsing.
const EMAIL_ADDRESS = /^[^\s@<>,]+@[^\s@<>,]+$/;

export interface InboxConfig {
  /** Lower-cased addresses that may sign in. */
  readonly users: readonly string[];
}

/** INBOX_USERS (or INQUIRY_TO); null when neither names anyone. */
export function parseInboxUsers(value: string | undefined, inquiryTo: string | undefined): InboxConfig | null {
  const list = value ?? inquiryTo;
  if (list === undefined) return null;
  const users = list.split(',').map((entry) => entry.trim());
  for (const user of users) {
    if (!EMAIL_ADDRESS.test(user))
      throw new ConfigError(value === undefined ? 'INQUIRY_TO' : 'INBOX_USERS', `"${user}" is not an email address`);
  }
  return Object.freeze({ users: Object.freeze([...new Set(users.map((user) => user.toLowerCase()))]) });
}

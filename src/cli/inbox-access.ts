// The CLI's commands on the inbox's sign-in (docs/inbox.md): `inbox-link ADDRESS` prints a one-time
// sign-in link (for a studio without SMTP), `sessions revoke --all` signs everybody out.
import { createAccess, LINK_TTL_MS } from '../inbox/access.js';
import { UsageError, type Values, type Work } from './commands.js';
import { printableLine } from './format.js';

const out = (text: string) => process.stdout.write(text);
const fail = (message: string): number => {
  process.stderr.write(`studio-inquiry: ${message}\n`);
  return 1;
};

export function inboxLink(_values: Values, positionals: readonly string[]): Work {
  if (positionals.length !== 1) throw new UsageError('inbox-link needs one address, one of INBOX_USERS');
  const address = positionals[0] as string;
  return async (store, config, _personalData, inbox) => {
    if (config.inbox === null) return fail('there is no inbox: set INBOX_USERS (or INQUIRY_TO) to the addresses that may sign in');
    const access = createAccess({
      store,
      inbox,
      users: config.inbox.users,
      emailChannel: null,
      studioName: '',
      signInUrl: `${config.publicUrl}/inbox/sign-in`,
      linkKey: '',
    });
    const link = await access.printableLink(address);
    if (link === null) return fail(`${printableLine(address)} is not one of INBOX_USERS, so it cannot sign in`);
    out(`${link}\nIt works once, within ${LINK_TTL_MS / 60_000} minutes, for ${printableLine(address.trim().toLowerCase())}.\n`);
    return 0;
  };
}

export function sessions(values: Values, positionals: readonly string[]): Work {
  if (positionals.length !== 1 || positionals[0] !== 'revoke' || values.all !== true) {
    throw new UsageError('sessions takes one form: sessions revoke --all');
  }
  return async (_store, _config, _personalData, inbox) => {
    const count = await inbox.deleteAllSessions();
    out(`Revoked ${count} inbox ${count === 1 ? 'session' : 'sessions'}: everybody signs in again.\n`);
    return 0;
  };
}

// Who may use the inbox (docs/inbox.md): a one-time sign-in link mailed through the outbox, or
// printed by `studio-inquiry inbox-link`, opens a session stored server-side and revocable.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Store } from '../storage/ports.js';
import type { InboxSessionRecord, InboxStore } from '../storage/ports-inbox.js';
import { linkPlaceholder, linkToken, randomSecret, secretHash } from './link-token.js';

export const LINK_TTL_MS = 15 * 60_000;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 30 * 86_400_000;
/** Links mailed to one address per LINK_TTL_MS: more is someone else asking on its behalf. */
export const LINKS_PER_ADDRESS = 3;
/** A session's last use is written at most this often (every page would otherwise write). */
const TOUCH_EVERY_MS = 60_000;

export interface InboxSession {
  /** What the cookie carries. */
  readonly id: string;
  readonly email: string;
  readonly csrfToken: string;
}

export interface AccessDeps {
  readonly store: Pick<Store, 'transaction' | 'outbox'>;
  readonly inbox: InboxStore;
  /** Lower-cased addresses that may sign in. */
  readonly users: readonly string[];
  /** The email channel, or null when no mail can be sent. */
  readonly emailChannel: string | null;
  readonly studioName: string;
  /** The sign-in page's address; the token is appended. */
  readonly signInUrl: string;
  /** The key mailed links' tokens are made with (link-token.ts), shared by every instance. */
  readonly linkKey: string;
  readonly now?: () => Date;
  readonly onQueued?: () => void;
}

export type Access = ReturnType<typeof createAccess>;

export function createAccess(deps: AccessDeps) {
  const now = deps.now ?? (() => new Date());
  const isUser = (email: string) => deps.users.includes(email.trim().toLowerCase());

  async function newSession(email: string): Promise<InboxSession> {
    const id = randomSecret();
    const at = now();
    const record: InboxSessionRecord = {
      idHash: secretHash(id),
      email,
      csrfToken: randomSecret(),
      createdAt: at,
      seenAt: at,
      expiresAt: new Date(at.getTime() + SESSION_MAX_MS),
    };
    await deps.inbox.insertSession(record);
    return { id, email, csrfToken: record.csrfToken };
  }

  return {
    isUser,
    /**
     * Mails a sign-in link to `email` if it is a user, the mail channel exists and the address has
     * not had LINKS_PER_ADDRESS within the last LINK_TTL_MS; whether it did is not the caller's to tell.
     */
    async requestLink(address: string, next?: string): Promise<'queued' | 'ignored'> {
      const email = address.trim().toLowerCase();
      if (!isUser(email) || deps.emailChannel === null) return 'ignored';
      const at = now();
      if ((await deps.inbox.countLinksSince(email, new Date(at.getTime() - LINK_TTL_MS))) >= LINKS_PER_ADDRESS) return 'ignored';
      const { nonce, placeholder } = linkPlaceholder();
      const channel = deps.emailChannel;
      await deps.store.transaction(async (tx) => {
        await deps.inbox.insertLink(
          { tokenHash: secretHash(linkToken(deps.linkKey, nonce)), email, createdAt: at, expiresAt: new Date(at.getTime() + LINK_TTL_MS) },
          tx,
        );
        await deps.store.outbox.enqueueMessage({ id: randomUUID(), to: email, ...signInMail(deps, placeholder, next) }, channel, at, tx);
      });
      deps.onQueued?.();
      return 'queued';
    },
    /** A link for `email` to hand over another way (the CLI's inbox-link): its URL, or null for no user. */
    async printableLink(address: string): Promise<string | null> {
      const email = address.trim().toLowerCase();
      if (!isUser(email)) return null;
      const token = randomSecret();
      const at = now();
      await deps.inbox.insertLink({ tokenHash: secretHash(token), email, createdAt: at, expiresAt: new Date(at.getTime() + LINK_TTL_MS) });
      return `${deps.signInUrl}?token=${token}`;
    },
    /** The session a link's token opens: once, within LINK_TTL_MS, for a user still listed. */
    async redeem(token: string): Promise<InboxSession | undefined> {
      const email = await deps.inbox.takeLink(secretHash(token), now());
      return email !== undefined && isUser(email) ? newSession(email) : undefined;
    },
    /** The session a cookie names, while neither idle past SESSION_IDLE_MS nor older than SESSION_MAX_MS. */
    async session(id: string | undefined): Promise<InboxSession | undefined> {
      if (id === undefined || id === '') return undefined;
      const idHash = secretHash(id);
      const record = await deps.inbox.findSession(idHash);
      if (record === undefined) return undefined;
      const at = now().getTime();
      if (record.expiresAt.getTime() <= at || record.seenAt.getTime() + SESSION_IDLE_MS <= at || !isUser(record.email)) {
        await deps.inbox.deleteSession(idHash);
        return undefined;
      }
      if (at - record.seenAt.getTime() >= TOUCH_EVERY_MS) await deps.inbox.touchSession(idHash, new Date(at));
      return { id, email: record.email, csrfToken: record.csrfToken };
    },
    signOut: (id: string) => deps.inbox.deleteSession(secretHash(id)),
  };
}

/** Whether a form's CSRF token is the session's, compared in constant time. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The mail with the link; `next`, a path of the inbox, is where the link leads once signed in. */
function signInMail({ studioName, signInUrl }: Pick<AccessDeps, 'studioName' | 'signInUrl'>, token: string, next?: string) {
  const minutes = LINK_TTL_MS / 60_000;
  return {
    subject: `Sign in to the inbox of ${studioName}`,
    body: [
      `Someone, hopefully you, asked to sign in to the inbox of ${studioName}.`,
      '',
      `Open this link within ${minutes} minutes to sign in (it works once):`,
      '',
      `${signInUrl}?token=${token}${next ? `&next=${encodeURIComponent(next)}` : ''}`,
      '',
      'If you did not ask, ignore this mail: nothing happens without the link.',
    ].join('\n'),
  };
}

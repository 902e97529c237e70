// A one-time code mailed through the outbox within the same caps as claim codes (code-limits.ts):
// per mailbox, per domain, per sign-in and for the whole service, counted in the transaction that
// queues it. The mail carries a placeholder; the code is put in as it is sent (claim-code-mail.ts).
import { randomUUID } from 'node:crypto';
import type { Store, Tx } from '../storage/ports.js';
import { codeFor, codePlaceholder } from './claim-code-mail.js';
import { type ConfiguredCaps, refuseOverCodeLimits } from './code-limits.js';
import { CODE_SEND_MEMORY_MS } from './limits.js';
import { canonicalRecipient, domainOf } from './recipient.js';

export interface CodeMailerDeps {
  readonly store: Pick<Store, 'auth' | 'outbox' | 'afterCommit'>;
  /** The channel that sends mail, or null when no SMTP is configured. */
  readonly emailChannel: string | null;
  readonly codeKey: string;
  readonly caps: ConfiguredCaps;
  readonly now: () => Date;
  readonly onCodeQueued?: () => void;
}

export interface CodeMail {
  readonly to: string;
  /** What the per-claim cap counts by: a hash naming the sign-in. */
  readonly scopeHash: string;
  readonly subject: string;
  /** The mail's text around the code: `text(placeholder)`. */
  readonly text: (code: string) => string;
}

export type CodeMailer = ReturnType<typeof createCodeMailer>;

export function createCodeMailer({ store, emailChannel, codeKey, caps, now, onCodeQueued }: CodeMailerDeps) {
  /** A fresh code: its placeholder for the mail, and the code itself (to hash, never to store). */
  function newCode(digits: number): { placeholder: string; code: string } {
    const { nonce, placeholder } = codePlaceholder();
    return { placeholder, code: codeFor(codeKey, nonce, digits) };
  }

  /** Queues the mail in `tx` (which must hold codeLocks(to)), or throws 429 rate_limited over a cap. */
  async function send(mail: CodeMail, placeholder: string, tx: Tx): Promise<void> {
    if (emailChannel === null) throw new Error('no email channel to mail a code through');
    const recipient = canonicalRecipient(mail.to);
    const sentAt = now();
    await refuseOverCodeLimits(store.auth, { recipient, tokenHash: mail.scopeHash, at: sentAt }, caps, tx);
    const expiresAt = new Date(sentAt.getTime() + CODE_SEND_MEMORY_MS);
    await store.auth.recordCodeSend({ recipient, domain: domainOf(recipient), tokenHash: mail.scopeHash, sentAt, expiresAt }, tx);
    await store.outbox.enqueueMessage(
      { id: randomUUID(), to: mail.to, subject: mail.subject, body: mail.text(placeholder) },
      emailChannel,
      sentAt,
      tx,
    );
    if (onCodeQueued) store.afterCommit(tx, onCodeQueued);
  }

  return { newCode, send, enabled: emailChannel !== null };
}

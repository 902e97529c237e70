// The limits a mailed claim code must fit (src/auth/limits.ts, docs/agent-auth.md), counted from the
// database in the transaction that queues the code, so that they hold across instances.
import type { AuthStore, CodeSendScope, Tx } from '../storage/ports.js';
import { AgentAuthError } from './errors.js';
import { CODES_PER_CLAIM, CODES_PER_RECIPIENT, type SendLimit, serviceMailLimits, waitBeforeNextSend } from './limits.js';
import { canonicalRecipient, domainOf } from './recipient.js';

/** One limit on codes: which sends it counts, its windows, and how a refusal names it. */
interface CodeCap {
  readonly scope: CodeSendScope;
  readonly limits: readonly SendLimit[];
  readonly what: string;
}

/** The caps that can be set: SERVICE_MAIL_LIMIT, and the one per domain (lifted by tests not about it). */
export interface ConfiguredCaps {
  readonly serviceMailPerHour: number;
  readonly perDomain: readonly SendLimit[];
}

/** What one more code, to `recipient` (canonical) for the claim `tokenHash`, must fit. */
function capsOn(recipient: string, tokenHash: string, { serviceMailPerHour, perDomain }: ConfiguredCaps): CodeCap[] {
  const domain = domainOf(recipient);
  return [
    { scope: { recipient }, limits: CODES_PER_RECIPIENT, what: 'to this email address' },
    { scope: { domain }, limits: perDomain, what: `to addresses at ${domain}` },
    { scope: { tokenHash }, limits: CODES_PER_CLAIM, what: 'for this claim' },
    {
      scope: { all: true },
      limits: serviceMailLimits(serviceMailPerHour),
      what: `by this service in the last hour (at most ${serviceMailPerHour})`,
    },
  ];
}

/**
 * The names a transaction that may mail a code to `email` (for the claim `tokenHash`) locks, one
 * per count it decides on, so that concurrent ones, on any instance, count the codes already sent
 * one after the other (store.transaction).
 */
export function codeLocks(email: string, tokenHash?: string): string[] {
  const recipient = canonicalRecipient(email);
  return [
    `claim-code-recipient:${recipient}`,
    `claim-code-domain:${domainOf(recipient)}`,
    'claim-code-all',
    ...(tokenHash === undefined ? [] : [`claim-codes:${tokenHash}`]),
  ];
}

const longestWindow = (limits: readonly SendLimit[]): number => Math.max(...limits.map((limit) => limit.windowMs));
const mostSends = (limits: readonly SendLimit[]): number => Math.max(...limits.map((limit) => limit.max));

/** "40 seconds", "15 minutes", "24 hours": the wait, rounded up, for the problem's detail. */
function inWords(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes <= 90) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `${Math.ceil(minutes / 60)} hours`;
}

/**
 * Throws 429 rate_limited, with Retry-After until one more code fits every limit, when a code to
 * `recipient` for `tokenHash` sent at `at` would pass one; its detail names the limit that waits longest.
 * `tx` must hold codeLocks, so that two requests on any instances cannot both take the last one.
 */
export async function refuseOverCodeLimits(
  auth: Pick<AuthStore, 'codesSentSince'>,
  send: { readonly recipient: string; readonly tokenHash: string; readonly at: Date },
  configured: ConfiguredCaps,
  tx: Tx,
): Promise<void> {
  const caps = capsOn(send.recipient, send.tokenHash, configured);
  const waits = await Promise.all(
    caps.map(async ({ scope, limits }) => {
      const since = new Date(send.at.getTime() - longestWindow(limits));
      return waitBeforeNextSend(await auth.codesSentSince(scope, since, mostSends(limits), tx), limits, send.at);
    }),
  );
  const longest = Math.max(...waits);
  if (longest <= 0) return;
  const seconds = Math.ceil(longest / 1000);
  const { what } = caps[waits.indexOf(longest)] as CodeCap;
  throw new AgentAuthError('rate_limited', `too many codes have been mailed ${what}: try again in ${inWords(seconds)}`, 429, seconds);
}

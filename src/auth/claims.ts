// Claims: a person takes ownership of an agent registration by proving an email address with a
// one-time code (docs/agent-auth.md). Claim tokens and codes are stored only as hashes; codes
// go out by email through the same outbox as inquiries.
import { createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { AgentClient, Claim, Store, Tx } from '../storage/ports.js';
import { codeFor, codePlaceholder } from './claim-code-mail.js';
import { codeLocks, refuseOverCodeLimits } from './code-limits.js';
import { AgentAuthError } from './errors.js';
import { CODE_SEND_MEMORY_MS, CODES_PER_DOMAIN, DEFAULT_SERVICE_MAIL_PER_HOUR, type SendLimit } from './limits.js';
import { canonicalRecipient, domainOf } from './recipient.js';

/** How long a registration can be claimed. */
export const CLAIM_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const OTP_TTL_MS = 15 * 60 * 1000;
/** Code attempts per claim, over all the codes it is sent (starting again does not reset them). */
export const OTP_MAX_FAILED_ATTEMPTS = 5;
export const OTP_DIGITS = 6;
/** A six-digit code has a million values: a fast hash would be no protection at rest, scrypt is. */
const OTP_HASH_BYTES = 32;

const scryptAsync = promisify(scrypt) as (password: string, salt: string, keylen: number) => Promise<Buffer>;

export const hashClaimToken = (token: string): string => createHash('sha256').update(token).digest('hex');
export const hashOtp = async (otp: string, tokenHash: string): Promise<string> =>
  (await scryptAsync(otp, tokenHash, OTP_HASH_BYTES)).toString('hex');

const previouslyClaimed = () => new AgentAuthError('previously_claimed', 'this registration has already been claimed', 409);
const codeExpired = () => new AgentAuthError('claim_expired', 'the code has expired: start the claim again to get a new one', 410);

export interface ClaimDeps {
  readonly store: Pick<Store, 'auth' | 'outbox' | 'transaction' | 'afterCommit'>;
  readonly studioName: string;
  /** The channel that sends mail, or null when no SMTP is configured. */
  readonly emailChannel: string | null;
  readonly now: () => Date;
  /** The key codes are derived under (claim-code-mail.ts), the same for every instance. */
  readonly codeKey: string;
  /** Called once a code's mail has been committed to the outbox: wakes the delivery worker. */
  readonly onCodeQueued?: () => void;
  /** SERVICE_MAIL_LIMIT: codes mailed in any hour, to anyone. */
  readonly serviceMailPerHour?: number;
  /** Codes mailed to one domain (CODES_PER_DOMAIN by default). */
  readonly codesPerDomain?: readonly SendLimit[];
}

export interface OpenedClaim {
  readonly claim_token: string;
  readonly claim_token_expires: string;
}

/** A claim made ready outside a transaction (claims.prepare), opened in one (claims.open). */
export interface PreparedClaim {
  readonly token: string;
  readonly tokenHash: string;
  readonly email: string | null;
  /** The first code and its hash, with an email. */
  readonly otp: { readonly placeholder: string; readonly hash: string } | null;
}

export type Claims = ReturnType<typeof createClaims>;

export function createClaims(deps: ClaimDeps) {
  const { store, studioName, emailChannel, now, onCodeQueued, codeKey } = deps;
  const caps = {
    serviceMailPerHour: deps.serviceMailPerHour ?? DEFAULT_SERVICE_MAIL_PER_HOUR,
    perDomain: deps.codesPerDomain ?? CODES_PER_DOMAIN,
  };
  /**
   * A new claim's token and, with `email`, its first code: made before the transaction that opens
   * it (claims.open), since hashing a code takes scrypt's time, and a transaction holds its locks
   * (on SQLite, the only connection) while it runs.
   */
  async function prepare(email: string | null): Promise<PreparedClaim> {
    const token = `clm_${randomBytes(32).toString('base64url')}`;
    const tokenHash = hashClaimToken(token);
    return { token, tokenHash, email, otp: email === null ? null : await newOtp(tokenHash) };
  }

  /**
   * Opens a prepared claim on a new registration; with an email, also sends the first code, within
   * the limits on codes: `tx` must then hold codeLocks(email). Over a limit it throws 429
   * rate_limited, and the caller's transaction, the registration with it, rolls back.
   */
  async function open(client: AgentClient, { token, tokenHash, email, otp }: PreparedClaim, tx: Tx): Promise<OpenedClaim> {
    const created = now();
    const expiresAt = new Date(created.getTime() + CLAIM_TOKEN_TTL_MS);
    const claim: Claim = {
      tokenHash,
      clientId: client.clientId,
      status: email === null ? 'open' : 'initiated',
      email,
      otpHash: otp?.hash ?? null,
      otpExpiresAt: otp ? new Date(created.getTime() + OTP_TTL_MS) : null,
      failedAttempts: 0,
      expiresAt,
      createdAt: created,
    };
    await store.auth.createClaim(claim, tx);
    if (email !== null && otp) await sendCode(email, otp.placeholder, tokenHash, tx);
    return { claim_token: token, claim_token_expires: expiresAt.toISOString() };
  }

  /** `{claim_token, email}`: (re)sends a code to the address. */
  async function start(token: string, email: string): Promise<{ status: 'initiated' }> {
    const claim = await usableClaim(token);
    const client = await store.auth.findClient(claim.clientId);
    // A verified_email registration is claimed by the address it named, and by no other.
    if (client?.status === 'pending' && client.email !== null && client.email.toLowerCase() !== email.toLowerCase()) {
      throw new AgentAuthError('invalid_request', 'this registration can only be claimed by the email address it was registered with');
    }
    const otp = await newOtp(claim.tokenHash);
    const started = await store.transaction(
      async (tx) => {
        // Only a claim still open or waiting for a code takes a new one: while the code was hashed,
        // another request may have completed the claim, and a claimed registration stays claimed
        // (the same statement checks it, so this holds across instances).
        const updated = await store.auth.updateClaim(
          claim.tokenHash,
          { status: 'initiated', email, otpHash: otp.hash, otpExpiresAt: new Date(now().getTime() + OTP_TTL_MS) },
          { status: ['open', 'initiated'] },
          tx,
        );
        // Over a limit on codes this throws, and the claim keeps its earlier code.
        if (updated) await sendCode(email, otp.placeholder, claim.tokenHash, tx);
        return updated;
      },
      { lock: codeLocks(email, claim.tokenHash) },
    );
    if (!started) throw await refusalOf(claim.tokenHash);
    return { status: 'initiated' };
  }

  /** `{claim_token, otp}`: completes the claim; returns the claimed client's id and email. */
  async function complete(token: string, otp: string): Promise<{ clientId: string; email: string }> {
    const claim = await usableClaim(token);
    if (claim.status !== 'initiated' || claim.otpHash === null || claim.email === null) {
      throw new AgentAuthError('invalid_request', 'no code was sent for this claim yet: start it with {claim_token, email}');
    }
    if (claim.otpExpiresAt === null || claim.otpExpiresAt.getTime() <= now().getTime()) {
      throw codeExpired();
    }
    const sent = claim.otpHash;
    // Hashed before the transaction: scrypt's time is not spent holding the claim's row.
    const given = Buffer.from(await hashOtp(otp, claim.tokenHash), 'hex');
    const outcome = await store.transaction(async (tx) => {
      // Counted first: the count's write holds the claim's row to the end of this transaction, so
      // attempts on one claim, from any instance, run one at a time: parallel guesses share the five
      // tries, and of parallel right codes the first claims it (codes are single-use).
      const attempts = await store.auth.countCodeAttempt(claim.tokenHash, OTP_MAX_FAILED_ATTEMPTS, tx);
      const current = await store.auth.findClaim(claim.tokenHash, tx);
      if (attempts === null || current === undefined || current.otpHash === null || current.email === null) {
        if (current?.status === 'claimed') return { refused: previouslyClaimed() };
        // Still waiting with its tries used up (left so by an earlier release, which counted and ended
        // in two steps): ended now, so that no start mails it codes that could never be accepted.
        if (current?.status === 'initiated') {
          await store.auth.updateClaim(claim.tokenHash, { status: 'ended', otpHash: null }, { status: ['initiated'] }, tx);
        }
        return { refused: new AgentAuthError('claim_expired', 'this claim has ended after too many wrong codes', 410) };
      }
      if (current.otpExpiresAt === null || current.otpExpiresAt.getTime() <= now().getTime()) {
        return { refused: codeExpired() };
      }
      if (timingSafeEqual(given, Buffer.from(current.otpHash, 'hex'))) {
        // A registration revoked since it was looked up stays revoked, and its claim unclaimed.
        if (!(await store.auth.activateClient(claim.clientId, current.email, tx))) {
          return { refused: new AgentAuthError('claim_expired', 'the registration has been revoked', 410) };
        }
        await store.auth.updateClaim(claim.tokenHash, { status: 'claimed', otpHash: null }, { status: ['initiated'] }, tx);
        return { claimed: { clientId: claim.clientId, email: current.email } };
      }
      // A wrong code is counted (the transaction commits) and then refused; the last try ends the claim.
      const last = attempts >= OTP_MAX_FAILED_ATTEMPTS;
      if (last) await store.auth.updateClaim(claim.tokenHash, { status: 'ended', otpHash: null }, { status: ['initiated'] }, tx);
      let detail = last ? 'wrong code; that was the last try and the claim has ended' : 'wrong code';
      // The code first sent, where a newer one has replaced it since (a restarted claim).
      if (!last && current.otpHash !== sent && timingSafeEqual(given, Buffer.from(sent, 'hex'))) {
        detail = 'a newer code has been sent for this claim: use the one in the latest mail';
      }
      return { refused: new AgentAuthError('otp_invalid', detail, 401) };
    });
    if ('refused' in outcome) throw outcome.refused;
    return outcome.claimed;
  }

  /** Why a claim that another request has claimed or ended meanwhile refuses this one. */
  async function refusalOf(tokenHash: string): Promise<AgentAuthError> {
    const claim = await store.auth.findClaim(tokenHash);
    if (claim?.status === 'claimed') return previouslyClaimed();
    return new AgentAuthError('claim_expired', 'this claim has expired or ended', 410);
  }

  async function usableClaim(token: string): Promise<Claim> {
    const claim = await store.auth.findClaim(hashClaimToken(token));
    if (!claim) throw new AgentAuthError('invalid_claim_token', 'unknown claim_token', 401);
    if (claim.status === 'claimed') throw previouslyClaimed();
    if (claim.status === 'ended' || claim.expiresAt.getTime() <= now().getTime()) {
      throw new AgentAuthError('claim_expired', 'this claim has expired or ended', 410);
    }
    const client = await store.auth.findClient(claim.clientId);
    if (!client || client.status === 'revoked') throw new AgentAuthError('claim_expired', 'the registration has been revoked', 410);
    return claim;
  }

  /** A new code's hash, and the placeholder its mail carries in its place until it is sent. */
  async function newOtp(tokenHash: string): Promise<{ placeholder: string; hash: string }> {
    if (emailChannel === null) {
      throw new AgentAuthError('invalid_request', 'this service sends no email (SMTP is not configured), so codes cannot be sent');
    }
    const { nonce, placeholder } = codePlaceholder();
    return { placeholder, hash: await hashOtp(codeFor(codeKey, nonce, OTP_DIGITS), tokenHash) };
  }

  /**
   * Queues the code's mail if every limit on codes (code-limits.ts), counted in `tx` under
   * codeLocks, allows one more. Over a limit nothing is mailed: 429 rate_limited with how long to wait.
   */
  async function sendCode(to: string, code: string, tokenHash: string, tx: Tx): Promise<void> {
    // `code` is the placeholder: the mail is queued without the code, put in as it is sent.
    const recipient = canonicalRecipient(to);
    const sentAt = now();
    await refuseOverCodeLimits(store.auth, { recipient, tokenHash, at: sentAt }, caps, tx);
    const expiresAt = new Date(sentAt.getTime() + CODE_SEND_MEMORY_MS);
    await store.auth.recordCodeSend({ recipient, domain: domainOf(recipient), tokenHash, sentAt, expiresAt }, tx);
    const minutes = OTP_TTL_MS / 60_000;
    const body =
      `Your ${studioName} verification code is ${code}.\n\n` +
      `It confirms that you own the AI agent registered with ${studioName}, and expires in ${minutes} minutes.\n` +
      'If you did not ask for it, ignore this mail: nothing happens without the code.\n';
    await store.outbox.enqueueMessage(
      { id: randomUUID(), to, subject: `Your ${studioName} verification code`, body },
      emailChannel as string,
      sentAt,
      tx,
    );
    // Sent now, not at the worker's next look: a person is waiting for it.
    if (onCodeQueued) store.afterCommit(tx, onCodeQueued);
  }

  return { prepare, open, start, complete, emailEnabled: emailChannel !== null };
}

// The storage ports of agent auth (ports.ts re-exports them): signing keys, clients, claims and their
// codes, revoked tokens, used assertions. Types only, importing nothing but the transaction's port.
import type { Tx } from './ports-tx.js';

export type ClaimStatus = 'open' | 'initiated' | 'claimed' | 'ended';
export type ClientStatus = 'active' | 'pending' | 'revoked';
/** oauth: the grant of a person who signed in through /oauth/authorize (its email verified). */
export type RegistrationType = 'anonymous' | 'verified_email' | 'id-jag' | 'oauth';

export interface Claim {
  readonly tokenHash: string;
  readonly clientId: string;
  readonly status: ClaimStatus;
  readonly email: string | null;
  readonly otpHash: string | null;
  readonly otpExpiresAt: Date | null;
  readonly failedAttempts: number;
  readonly expiresAt: Date;
  readonly createdAt: Date;
}

/**
 * The state a claim must still be in for a change to be written (the one the change was decided on).
 * The database checks it in the same statement, so a claim moved on meanwhile is left as it is.
 */
export interface ClaimExpectation {
  readonly status: readonly ClaimStatus[];
  /** The code the decision was made with: a claim whose code has been replaced since is left alone. */
  readonly otpHash?: string;
}

/** A claim code mailed, as the limits on codes count it. */
export interface CodeSend {
  /** The mailbox (canonicalRecipient in src/auth/recipient.ts). */
  readonly recipient: string;
  /** Its domain, Gmail's under gmail.com. */
  readonly domain: string;
  /** The claim it was sent for. */
  readonly tokenHash: string;
  readonly sentAt: Date;
  /** When no limit counts it any more (it may be purged after). */
  readonly expiresAt: Date;
}

/** Which codes a limit counts: to one recipient, to one domain, for one claim, or all of them. */
export type CodeSendScope =
  | { readonly recipient: string }
  | { readonly domain: string }
  | { readonly tokenHash: string }
  | { readonly all: true };

export interface SigningKeyRecord {
  readonly kid: string;
  readonly privateJwk: string;
  readonly publicJwk: string;
  readonly createdAt: Date;
}

export interface AgentClient {
  readonly clientId: string;
  readonly clientName: string;
  readonly clientUri: string | null;
  readonly registrationType: RegistrationType;
  readonly status: ClientStatus;
  readonly email: string | null;
  readonly subject: string | null;
  readonly issuer: string | null;
  readonly createdAt: Date;
}

/** Everything agent auth must hold across restarts and instances: held by rows and constraints, never by process memory. */
export interface AuthStore {
  /** Unretired signing keys, newest first. */
  signingKeys(tx?: Tx): Promise<SigningKeyRecord[]>;
  addSigningKey(key: SigningKeyRecord, tx?: Tx): Promise<void>;
  /** Stores a key's private part anew (sealed with another secret, or first sealed). */
  resealSigningKey(kid: string, privateJwk: string, tx?: Tx): Promise<void>;
  /**
   * Inserts the client; false, and nothing written, where an active client already has its issuer
   * and subject (one client per person at an ID-JAG issuer, held by a unique index: migration 006).
   */
  createClient(client: AgentClient, tx?: Tx): Promise<boolean>;
  /** Makes a pending or anonymous client active, owned by `email` (a completed claim); false where it is revoked or unknown. */
  activateClient(clientId: string, email: string, tx?: Tx): Promise<boolean>;
  createClaim(claim: Claim, tx?: Tx): Promise<void>;
  findClaim(tokenHash: string, tx?: Tx): Promise<Claim | undefined>;
  /**
   * Counts one code attempt atomically, if the claim is waiting for a code and has attempts left;
   * returns the new count, or null when it has none (concurrent guesses cannot share one count).
   */
  countCodeAttempt(tokenHash: string, maxAttempts: number, tx?: Tx): Promise<number | null>;
  /** Changes the claim if it is still as `expected`; false, and nothing written, where it is not. */
  updateClaim(
    tokenHash: string,
    changes: Partial<Pick<Claim, 'status' | 'email' | 'otpHash' | 'otpExpiresAt' | 'failedAttempts'>>,
    expected: ClaimExpectation,
    tx?: Tx,
  ): Promise<boolean>;
  /** Records a claim code mailed (in the transaction that queues it). */
  recordCodeSend(send: CodeSend, tx?: Tx): Promise<void>;
  /**
   * When codes were mailed to a recipient, a domain, for a claim, or at all, after `since`: newest
   * first, at most `limit`. Read in the transaction that decides on the next one, holding a lock on its name.
   */
  codesSentSince(to: CodeSendScope, since: Date, limit: number, tx?: Tx): Promise<Date[]>;
  findClient(clientId: string): Promise<AgentClient | undefined>;
  /** The client registered for a subject of another issuer (ID-JAG), if any. */
  findClientBySubject(issuer: string, subject: string): Promise<AgentClient | undefined>;
  /** Marks the client revoked; every token minted for it stops working. */
  revokeClient(clientId: string, at: Date): Promise<void>;
  revokeToken(jti: string, expiresAt: Date, at: Date): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;
  /** Records a foreign assertion's (issuer, jti); false when it was redeemed before (a replay). */
  useAssertion(issuer: string, jti: string, expiresAt: Date): Promise<boolean>;
}

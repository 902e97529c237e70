// The storage port of personal data (docs/operations.md, "Personal data"): everything held about one
// person, found by address, read for an export (GDPR art. 15) and erased on request (art. 17). Types
// only, on the records of ports.ts; the SQLite/PostgreSQL code implements it.
import type {
  AgentClient,
  Authorization,
  Claim,
  CodeSend,
  DeliveryAttempt,
  DeliveryRecord,
  IdempotencyEntry,
  InquiryJudgement,
  InquiryRecord,
  RefreshToken,
  ServiceMessage,
} from './ports.js';

/** One person, as erase and export find them. */
export interface DataSubject {
  /** The address, lower-cased: inquiries, registrations, claims and mails to it are found in any case. */
  readonly email: string;
  /** The mailbox it reaches (canonicalRecipient in src/auth/recipient.ts), as claim codes mailed are recorded. */
  readonly recipient: string;
}

/** A delivery with every attempt made. */
export interface HeldDelivery extends DeliveryRecord {
  readonly history: readonly DeliveryAttempt[];
}

export interface HeldInquiry extends InquiryRecord {
  readonly verdict: InquiryJudgement['verdict'];
  readonly spamScore: number;
  readonly reasons: InquiryJudgement['reasons'];
  readonly deliveries: readonly HeldDelivery[];
  /** The keys of the requests that created it or were answered with it. */
  readonly idempotencyKeys: readonly Pick<IdempotencyEntry, 'key' | 'createdAt' | 'outcome'>[];
}

/** A mail the service sent the person (a claim code); its body is blank once sent. */
export interface HeldServiceMail extends ServiceMessage {
  readonly createdAt: Date;
  readonly deliveries: readonly HeldDelivery[];
}

/**
 * What is held about one person. Claims and code sends without their secrets' hashes, inquiries
 * without the hashes that find repeats: derived from what is here, and of use to nobody outside.
 */
export interface PersonalData {
  /** Oldest first. */
  readonly inquiries: readonly HeldInquiry[];
  /** Agent registrations owned by the address (verified or claimed). */
  readonly agentRegistrations: readonly AgentClient[];
  /** Claims naming the address, and every claim of those registrations. */
  readonly agentClaims: readonly Pick<Claim, 'clientId' | 'status' | 'email' | 'failedAttempts' | 'expiresAt' | 'createdAt'>[];
  readonly serviceMails: readonly HeldServiceMail[];
  /** Claim codes mailed to the mailbox or for those claims, as the limits on codes count them. */
  readonly codesMailed: readonly Omit<CodeSend, 'tokenHash'>[];
  /** OAuth sign-ins naming the address, or whose grant is one of its registrations; without their hashes. */
  readonly signIns: readonly Pick<
    Authorization,
    'clientId' | 'redirectUri' | 'resource' | 'scope' | 'status' | 'email' | 'grantId' | 'expiresAt' | 'createdAt'
  >[];
  /** The refresh tokens of those grants, without their hashes. */
  readonly refreshTokens: readonly Omit<RefreshToken, 'tokenHash'>[];
}

/** What an erase deleted: the inquiries by reference, the rest counted. */
export interface ErasedData {
  readonly inquiries: readonly Pick<InquiryRecord, 'reference' | 'receivedAt'>[];
  readonly deliveries: number;
  readonly attempts: number;
  readonly idempotencyKeys: number;
  readonly agentRegistrations: readonly string[];
  readonly agentClaims: number;
  readonly serviceMails: number;
  readonly codesMailed: number;
  readonly signIns: number;
  readonly refreshTokens: number;
}

/**
 * An erase done, or nothing done because deliveries of the person were being sent (leased, the
 * lease unexpired): erasing them then could not stop the send.
 */
export type Erasure = { readonly erased: ErasedData } | { readonly inFlight: readonly DeliveryRecord[] };

/**
 * What became of deleted rows in the database's files. SQLite: overwritten with zeros in the file
 * (secure_delete); `walEmptied` false when readers kept the write-ahead log, which still holds
 * earlier copies, from being emptied. PostgreSQL: left to VACUUM (docs/operations.md).
 */
export type Scrub = { readonly dialect: 'sqlite'; readonly walEmptied: boolean } | { readonly dialect: 'postgres' };

export interface PersonalDataStore {
  /** The address of the inquiry with this reference, as it was written; undefined when there is none. */
  addressOf(reference: string): Promise<string | undefined>;
  find(subject: DataSubject): Promise<PersonalData>;
  /** Deletes everything held about the person in one transaction, unless deliveries of it are in flight at `now`. */
  erase(subject: DataSubject, now: Date): Promise<Erasure>;
  /** After an erase: makes what it deleted unreadable in the database's files where the database can. */
  scrub(): Promise<Scrub>;
}

// The storage ports: the records the domain reads and writes, the opaque transaction and the store
// interfaces. Types only, importing nothing but the other ports (ports-*.ts, which it re-exports):
// the SQLite/PostgreSQL code implements them, the domain depends on them alone (docs/architecture.md).
import type { DeliveryAlertStore } from './ports-alerts.js';
import type { AuthStore } from './ports-auth.js';
import type { OAuthStore } from './ports-oauth.js';
import type { RetentionStore } from './ports-retention.js';
import type { Tx } from './ports-tx.js';

export type * from './ports-alerts.js';
export type * from './ports-auth.js';
export type * from './ports-oauth.js';
export type * from './ports-retention.js';
export type * from './ports-tx.js';

export type Dialect = 'sqlite' | 'postgres';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead';
/** Where an inquiry went: the inbox (delivered) or the quarantine (stored, not delivered; docs/spam.md). */
export type InquiryVerdict = 'inbox' | 'spam';

/** The door an inquiry came through: the contact page, another HTTP client, or an MCP tool call. */
export type InquirySource = 'page' | 'api' | 'mcp';

// Inquiries, idempotency keys and intake batches.

export interface InquiryRecord {
  readonly reference: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly company: string | null;
  readonly message: string;
  readonly clientId: string | null;
  readonly receivedAt: Date;
  /** Null for an inquiry stored before sources were recorded. */
  readonly source: InquirySource | null;
}

/** The spam rules' judgement of an inquiry, stored with it (docs/spam.md). */
export interface InquiryJudgement {
  readonly verdict: InquiryVerdict;
  readonly score: number;
  readonly reasons: readonly { readonly code: string; readonly detail: string }[];
  /** When `release REF` took it out of the quarantine (stored ones only). */
  readonly releasedAt?: Date;
}

export interface NewInquiry {
  readonly inquiry: InquiryRecord;
  /** Inbox, with no score or reasons, when not given (the spam filter off). */
  readonly judgement?: InquiryJudgement;
  /** SHA-256 of the normalised email and message: finds a repeated submission. */
  readonly fingerprint: string;
  /** SHA-256 of the canonical message alone (src/spam/repeats.ts), or null: finds the same body from other senders. */
  readonly bodyHash?: string | null;
}

export interface InquiryStore {
  /** Inserts those whose reference is free; returns the references inserted. */
  insertMany(inquiries: readonly NewInquiry[], tx?: Tx): Promise<Set<string>>;
  findByReference(reference: string, tx?: Tx): Promise<InquiryRecord | undefined>;
  /** The stored judgements of those of `references` that exist. */
  judgements(references: readonly string[]): Promise<Map<string, InquiryJudgement>>;
  /** Those of `references` that an inquiry has already. */
  takenReferences(references: readonly string[], tx?: Tx): Promise<Set<string>>;
  /**
   * For each fingerprint, the earliest inquiry received at or after `since` that has it (of several
   * received in the same millisecond, the one whose reference sorts first), on either database.
   */
  findRecentByFingerprints(fingerprints: readonly string[], since: Date, tx?: Tx): Promise<Map<string, string>>;
  /** For each body hash, up to `limit` lower-cased addresses that sent it at or after `since`. */
  findSendersByBodyHashes(bodyHashes: readonly string[], since: Date, limit: number, tx?: Tx): Promise<Map<string, Set<string>>>;
  /**
   * Newest first (of equal times, by reference); with `after`, those that come after that inquiry in
   * this order: the next page of a listing, however many there are.
   */
  list(options: {
    limit: number;
    since?: Date;
    after?: Pick<InquiryRecord, 'receivedAt' | 'reference'>;
    /** Only the inquiries with this verdict; all when left out. */
    verdict?: InquiryVerdict;
  }): Promise<InquiryRecord[]>;
  /**
   * Sets the verdict of an inquiry; on a move to the inbox, queues in the same transaction a delivery
   * due at `now` per channel it has none on; a move to the quarantine at `now` is for the next digest.
   * False, and nothing written, where it has that verdict already or none exists.
   */
  setVerdict(reference: string, verdict: InquiryVerdict, channels: readonly string[], now: Date): Promise<boolean>;
  /** How many inquiries were received after `since` (by any instance), counting no further than `limit`. */
  countReceivedSince(since: Date, limit: number): Promise<number>;
}

export interface IdempotencyEntry {
  readonly key: string;
  readonly requestHash: string;
  readonly reference: string;
  readonly createdAt: Date;
  /** What the key's first request was answered, and so every replay of it. */
  readonly outcome: 'created' | 'duplicate';
}

export interface IdempotencyStore {
  findMany(keys: readonly string[], tx?: Tx): Promise<Map<string, IdempotencyEntry>>;
  insertMany(entries: readonly IdempotencyEntry[], tx?: Tx): Promise<void>;
  deleteOlderThan(cutoff: Date): Promise<number>;
}

/** What deciding a batch of submissions needs to know (IntakeStore.lookup). */
export interface IntakeQuery {
  readonly keys: readonly string[];
  readonly fingerprints: readonly string[];
  /** Inquiries received before this are not folded into. */
  readonly since: Date;
  /** Fresh references to check. */
  readonly references: readonly string[];
  /** Body hashes whose senders to find (as findSendersByBodyHashes). */
  readonly senders?: { readonly bodyHashes: readonly string[]; readonly since: Date; readonly limit: number };
}

export interface IntakeFacts {
  /** The stored entries of the query's keys. */
  readonly keys: Map<string, IdempotencyEntry>;
  /** By fingerprint, the reference of the inquiry a repeat folds into (as findRecentByFingerprints). */
  readonly recent: Map<string, string>;
  /** The query's references that an inquiry has already. */
  readonly taken: Set<string>;
  /** By body hash, the lower-cased addresses that sent it (at most the query's limit each). */
  readonly senders: Map<string, Set<string>>;
}

/** What a batch of submissions writes (IntakeStore.write). */
export interface IntakeWrites {
  readonly inquiries: readonly NewInquiry[];
  /** One pending delivery per new inquiry in the inbox and channel (none for spam). */
  readonly channels: readonly string[];
  readonly keys: readonly IdempotencyEntry[];
  readonly now: Date;
}

/**
 * An intake batch's reads and writes, each as one unit: one statement each on PostgreSQL, where a
 * statement costs as much as several inquiries; elsewhere the methods of the other stores.
 */
export interface IntakeStore {
  lookup(query: IntakeQuery, tx: Tx): Promise<IntakeFacts>;
  /** Inserts the inquiries whose reference is free, their deliveries and the keys; returns the references inserted. */
  write(writes: IntakeWrites, tx: Tx): Promise<Set<string>>;
}

// The delivery outbox.

export interface DeliveryRecord {
  readonly id: string;
  /** The inquiry delivered; null for a service message. */
  readonly reference: string | null;
  readonly channel: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly runAt: Date;
  readonly lastError: string | null;
  /** When it was queued or last re-queued: the retry window counts from here. */
  readonly queuedAt: Date;
  readonly finishedAt: Date | null;
}

export interface DeliveryAttempt {
  readonly attempt: number;
  readonly attemptedAt: Date;
  /** `retry`: failed, to be tried again; `failed`: refused for good; `dead`: failed with the retry window spent. */
  readonly outcome: 'succeeded' | 'retry' | 'failed' | 'dead';
  readonly error: string | null;
  readonly durationMs: number;
}

/**
 * What the service itself sends (a claim code, the quarantine digest), through the same outbox as
 * inquiries. On the webhook channel it is an event: `body` the JSON posted, `subject` its type.
 */
export interface ServiceMessage {
  readonly id: string;
  /** The mailbox; empty for an event. */
  readonly to: string;
  readonly subject: string;
  readonly body: string;
}

/** What a delivery carries. */
export type Outgoing =
  | { readonly kind: 'inquiry'; readonly inquiry: InquiryRecord }
  | { readonly kind: 'message'; readonly message: ServiceMessage };

/** A claimed delivery together with what it carries. */
export interface DueDelivery {
  readonly delivery: DeliveryRecord;
  readonly payload: Outgoing;
}

/**
 * One attempt to record. It is recorded only while its worker still holds the delivery's lease: one
 * whose lease ran out and was taken over cannot overwrite the outcome the other worker records.
 */
export interface AttemptRecord {
  readonly deliveryId: string;
  /** The claiming worker's id (claimDue's `owner`). */
  readonly owner: string;
  /**
   * The attempt count when claimed. Any recorded attempt raises it, so a record written twice, or
   * late after another was recorded, is refused even where the lease is this worker's again.
   */
  readonly attempts: number;
  readonly attempt: Omit<DeliveryAttempt, 'attempt'>;
  readonly result: AttemptOutcome;
}

export type AttemptOutcome =
  | { readonly outcome: 'succeeded' }
  | { readonly outcome: 'retry'; readonly error: string; readonly runAt: Date }
  | { readonly outcome: 'failed' | 'dead'; readonly error: string };

/** What the store knows of one channel's health (Outbox.health; judged by src/delivery/health.ts). */
export interface ChannelHealthFacts {
  readonly channel: string;
  /** Pending deliveries never tried yet. */
  readonly waiting: number;
  /** Pending deliveries tried and failed at least once, to be tried again. */
  readonly retrying: number;
  /** Given up: failed until the retry window was spent. */
  readonly dead: number;
  /** Given up: refused for good by the other side. */
  readonly failed: number;
  /** When the latest of the dead deliveries was given up (a refusal for good, `failed`, is one message's, not the channel's). */
  readonly lastGivenUpAt: Date | null;
  readonly lastSuccessAt: Date | null;
  readonly lastFailure: { readonly at: Date; readonly error: string } | null;
  /** When the first attempt failed of those since the last success; null when the last attempt succeeded, or none was made. */
  readonly failingSince: Date | null;
}

export interface Outbox {
  /** One pending delivery per reference and channel. */
  enqueue(references: readonly string[], channels: readonly string[], now: Date, tx?: Tx): Promise<void>;
  /** Queues a service message for one channel (in the caller's transaction, if given). */
  enqueueMessage(message: ServiceMessage, channel: string, now: Date, tx?: Tx): Promise<void>;
  /**
   * Leases due pending deliveries (or ones whose lease ran out) to `owner` until `now + leaseMs`: up
   * to `limit` of any channel, or per channel up to the number given for it (others left alone).
   */
  claimDue(now: Date, limit: number | ReadonlyMap<string, number>, leaseMs: number, owner: string): Promise<DueDelivery[]>;
  /**
   * Records one attempt and its consequence, releasing the lease. False, and nothing written, when
   * the delivery is no longer leased to the record's owner (taken over, or recorded already).
   */
  recordAttempt(record: AttemptRecord, tx?: Tx): Promise<boolean>;
  /** Records many attempts in the caller's transaction; for each, whether it was recorded (as recordAttempt). */
  recordAttempts(records: readonly AttemptRecord[], tx: Tx): Promise<boolean[]>;
  /**
   * Extends to `until` the leases `owner` still holds on these deliveries; returns the ids renewed.
   * One another worker has taken over, or whose attempt is recorded, is left alone.
   */
  renewLeases(deliveryIds: readonly string[], owner: string, until: Date): Promise<string[]>;
  /** Gives deliveries claimed by `owner` back unused (still due, for any worker to claim). */
  releaseClaims(deliveryIds: readonly string[], owner: string): Promise<void>;
  /** Drops every lease: for a single-instance store after a crash, so nothing waits out a lease. */
  releaseLeases(): Promise<void>;
  /** Puts failed and dead deliveries (all, or one inquiry's) back in the queue; returns how many. */
  requeue(now: Date, reference?: string): Promise<number>;
  forReference(reference: string): Promise<DeliveryRecord[]>;
  forReferences(references: readonly string[]): Promise<DeliveryRecord[]>;
  attempts(deliveryId: string): Promise<DeliveryAttempt[]>;
  countByStatus(): Promise<Record<DeliveryStatus, number>>;
  /** Deliveries per channel and status, for /metrics. */
  countByChannelAndStatus(): Promise<{ channel: string; status: DeliveryStatus; count: number }[]>;
  /** Each channel's health, for every channel that has a delivery or a recorded attempt. */
  health(): Promise<ChannelHealthFacts[]>;
}

// The quarantine digest (docs/spam.md).

/** A quarantined inquiry as a digest lists it. */
export interface QuarantinedInquiry {
  readonly inquiry: InquiryRecord;
  readonly judgement: InquiryJudgement;
  /** When it went to the quarantine: its receipt, or when it was moved there later. */
  readonly quarantinedAt: Date;
}

/** What a digest takes from the quarantine. */
export interface DigestContents {
  /** When the digest before it was taken; null for the first. */
  readonly since: Date | null;
  /** The inquiries it takes: every one quarantined and listed by no digest since. */
  readonly total: number;
  /** Of those, up to the limit asked: the lowest scores first, then the earliest quarantined. */
  readonly listed: readonly QuarantinedInquiry[];
}

export interface DigestStore {
  /**
   * Records the digest and takes into it the inquiries of DigestContents (an inquiry moved to the
   * quarantine again is taken again), in `tx`. Null, and nothing written, where `period` has its
   * digest already: once per period, across instances. A null period is never taken already.
   */
  take(digest: { id: string; period: string | null; at: Date; limit: number }, tx: Tx): Promise<DigestContents | null>;
}

/** Secrets every instance shares (the proof of work's key, the claim codes' key) and the proofs of work used (docs/spam.md). */
export interface ProofStore {
  /** The secret stored as `name`, or `candidate` stored as it where there is none: the same value for every instance. */
  secret(name: string, candidate: string): Promise<string>;
  /** Records a proof as used until `expiresAt`; false, and nothing written, where it was used before (a replay). */
  spend(id: string, expiresAt: Date): Promise<boolean>;
  /** Forgets the proofs whose challenge expired before `now`. */
  purgeExpired(now: Date): Promise<void>;
}

// The store as a whole.

export interface TransactionOptions {
  /** Durable (the default) unless the results may be lost with the machine's power (see inTransaction). */
  readonly durable?: boolean;
  /**
   * Names (a fingerprint, an idempotency key) concurrent transactions must not decide about at once,
   * across processes: PostgreSQL advisory locks taken before `work` runs, so its first statement sees
   * what the last holder committed. Nothing to do on SQLite, where one transaction writes at a time.
   */
  readonly lock?: readonly string[];
  /** How long the locks may be waited for before the transaction fails (LOCK_TIMEOUT_MS by default). */
  readonly lockTimeoutMs?: number;
}

export interface Store {
  readonly dialect: Dialect;
  /** Write transactions worth running at once: one on SQLite (one writer); several on PostgreSQL, which overlaps their round trips. */
  readonly parallelWrites: number;
  readonly auth: AuthStore;
  /** The MCP authorization flow: registered clients, sign-ins, refresh tokens. */
  readonly oauth: OAuthStore;
  readonly inquiries: InquiryStore;
  readonly idempotency: IdempotencyStore;
  readonly intake: IntakeStore;
  readonly outbox: Outbox;
  readonly digests: DigestStore;
  readonly alerts: DeliveryAlertStore;
  readonly retention: RetentionStore;
  readonly proofs: ProofStore;
  /** A durable transaction unless `durable: false`; with `lock`, transactions locking a name in common run one after the other, across processes. */
  transaction<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `callback` once `tx` has committed (never if it rolls back): how work queued inside a
   * transaction, such as a mail in the outbox, wakes whoever sends it. The callback must not throw.
   */
  afterCommit(tx: Tx, callback: () => void): void;
  ping(): Promise<void>;
  /** A consistent copy of a SQLite database in a new file (absent on PostgreSQL: pg_dump's part). */
  readonly backup?: (destination: string) => Promise<void>;
  close(): Promise<void>;
}

/** Which of the migrations a database records, against those of this release. */
export interface SchemaVersion {
  /** The migrations the database records as applied, by name; none where the service never ran on it. */
  readonly applied: readonly string[];
  /** This release's migrations, in order: the schema it expects has them all and no other. */
  readonly expected: readonly string[];
}

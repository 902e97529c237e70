// The storage port of retention (ports.ts re-exports it): deletions of what has been kept long
// enough, each call one short transaction through at most `limit` rows. Types only, importing nothing.

/** What retention deletes, as counted in logs and metrics. */
export type RetentionKind =
  | 'inquiries'
  | 'deliveries'
  | 'attempts'
  | 'idempotencyKeys'
  | 'messages'
  | 'clients'
  | 'claims'
  | 'revokedTokens'
  | 'usedAssertions'
  | 'codeSends'
  | 'authorizations'
  | 'refreshTokens'
  | 'oauthClients';

/** What one call went through (`seen`: fewer than its limit once nothing more matches) and deleted. */
export interface RetentionBatch {
  readonly seen: number;
  readonly deleted: Readonly<Partial<Record<RetentionKind, number>>>;
}

/** The cutoffs of the agent-auth records that have served their purpose (src/retention.ts decides them). */
export interface SpentClientCutoffs {
  /** Revoked clients, revoked before this. */
  readonly revokedBefore: Date;
  /** Clients still pending (a verified_email registration never confirmed) whose every claim expired before this. */
  readonly pendingClaimExpiredBefore: Date;
  /** Anonymous clients never claimed (no email), registered before this. */
  readonly unclaimedAnonymousBefore: Date;
}

/** The cutoffs of the sign-in flow's records (src/maintenance.ts decides them). */
export interface SpentSignInCutoffs {
  /** Sign-ins and refresh tokens that expired before this; grants made before it with no refresh token left. */
  readonly expiredBefore: Date;
  /** Registered clients never used, registered before this. */
  readonly unusedClientBefore: Date;
  /** Registered clients last used before this. */
  readonly idleClientBefore: Date;
}

export interface RetentionStore {
  /**
   * Deletes up to `limit` inquiries with `verdict` received before `before`, oldest first, with
   * their deliveries, delivery attempts and idempotency keys. One with a delivery that has not
   * ended (pending) is skipped, and so is one locked by another instance deleting it at the same time.
   */
  deleteInquiries(verdict: 'inbox' | 'spam', before: Date, limit: number): Promise<RetentionBatch>;
  /** Deletes up to `limit` service messages whose every delivery finished before `before`, with those deliveries and their attempts. */
  deleteFinishedMessages(before: Date, limit: number): Promise<RetentionBatch>;
  /** Deletes up to `limit` clients past one of `cutoffs`, with their claims. */
  deleteSpentClients(cutoffs: SpentClientCutoffs, limit: number): Promise<RetentionBatch>;
  /** Deletes up to `limit` claims that expired before `before`, whatever became of them. */
  deleteExpiredClaims(before: Date, limit: number): Promise<RetentionBatch>;
  /** Deletes up to `limit` each of revoked token ids, used assertions and code sends that expired before `now`. */
  deleteExpiredTokenRecords(now: Date, limit: number): Promise<RetentionBatch>;
  /** Deletes up to `limit` each of spent sign-ins, refresh tokens, registered clients and grants (retention-oauth.ts). */
  deleteSpentSignIns(cutoffs: SpentSignInCutoffs, limit: number): Promise<RetentionBatch>;
}

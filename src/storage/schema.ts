// Table shapes as Kysely sees them. Times are milliseconds since the epoch (BIGINT) so that SQLite
// and PostgreSQL store and compare them alike.
import type { Generated } from 'kysely';
import type { ClaimStatus, ClientStatus, DeliveryStatus, InquirySource, InquiryVerdict, RegistrationType } from './ports.js';
import type { OAuthAuthorizationsTable, OAuthClientsTable, OAuthRefreshTokensTable } from './schema-oauth.js';

export interface InquiriesTable {
  reference: string;
  first_name: string;
  last_name: string;
  email: string;
  company: string | null;
  message: string;
  client_id: string | null;
  /** SHA-256 of the normalised email and message: finds a repeated submission. */
  fingerprint: string;
  received_at: number;
  /** inbox or spam (migration 013; inbox for older rows). */
  verdict: InquiryVerdict;
  spam_score: number;
  /** JSON array of {code, detail}: why the rules scored it so. */
  spam_reasons: string;
  /** SHA-256 of the canonical message (migration 014; null for short bodies and older rows). */
  body_hash: string | null;
  /** When a move put it in the quarantine after its receipt (migration 016); null otherwise. */
  quarantined_at: number | null;
  /** The quarantine digest that took it since it was last quarantined (migration 016). */
  digest_id: string | null;
  /** When `release REF` last took it out of the quarantine (migration 019); null otherwise. */
  released_at: number | null;
  /** Which door it came through (migration 020); null for older rows. */
  source: InquirySource | null;
}

/** An inquiry as intake inserts it: the quarantine digest's columns (migration 016) start null. */
export type NewInquiryRow = Omit<InquiriesTable, 'quarantined_at' | 'digest_id' | 'released_at'>;

export interface IdempotencyKeysTable {
  key: string;
  request_hash: string;
  reference: string;
  created_at: number;
  /** created or duplicate: what the key's first request was answered (migration 009; null before it). */
  outcome: string | null;
}

export interface DeliveriesTable {
  id: string;
  /** The inquiry delivered, or null for a service message. */
  reference: string | null;
  message_id: string | null;
  channel: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  run_at: number;
  locked_until: number | null;
  /** The worker holding the lease (DeliveryWorker's random id), while locked_until is set. */
  locked_by: string | null;
  last_error: string | null;
  /** When the delivery was queued (or re-queued): its retry window counts from here. */
  queued_at: number;
  finished_at: number | null;
}

export interface DeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: number;
  outcome: 'succeeded' | 'retry' | 'failed' | 'dead';
  error: string | null;
  duration_ms: number;
}

/**
 * Deliveries that have succeeded, per channel (migration 008), and the channel's health (migration
 * 025): kept where each attempt is recorded, so that neither /metrics nor the health reads a table
 * that only grows.
 */
export interface DeliverySuccessesTable {
  channel: string;
  count: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  /** The error of the attempt at last_failure_at. */
  last_error: string | null;
  /** The first failed attempt after the last success, while no attempt has succeeded since; else null. */
  failing_since: number | null;
}

export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export interface AgentClientsTable {
  client_id: string;
  client_name: string;
  client_uri: string | null;
  registration_type: RegistrationType;
  status: ClientStatus;
  email: string | null;
  subject: string | null;
  issuer: string | null;
  created_at: number;
  revoked_at: number | null;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: number;
  revoked_at: number;
}

export interface UsedAssertionsTable {
  issuer: string;
  jti: string;
  expires_at: number;
}

export interface MessagesTable {
  id: string;
  to_address: string;
  subject: string;
  body: string;
  created_at: number;
}

export interface AgentClaimsTable {
  token_hash: string;
  client_id: string;
  status: ClaimStatus;
  email: string | null;
  otp_hash: string | null;
  otp_expires_at: number | null;
  failed_attempts: Generated<number>;
  expires_at: number;
  created_at: number;
}

/** A claim code mailed: what the limits per recipient and per claim count (migration 007). */
export interface ClaimCodeSendsTable {
  /** The mailbox (canonicalRecipient in src/auth/recipient.ts). */
  recipient: string;
  /** Its domain (migration 012); null on rows written before it. */
  domain: string | null;
  /** The claim it was sent for (agent_claims.token_hash). */
  token_hash: string;
  sent_at: number;
  /** When no limit counts it any more: purged after. */
  expires_at: number;
}

/** A quarantine digest taken (migration 016): once per period; a null period is `digest --send`'s. */
export interface QuarantineDigestsTable {
  id: string;
  /** The UTC day (YYYY-MM-DD) of the schedule's digest. */
  period: string | null;
  taken_at: number;
  /** How many inquiries it took. */
  total: number;
}

/** A secret made once and shared by every instance, such as the proof of work's HMAC key (migration 015). */
export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: number;
}

/** A proof of work used once (migration 015): kept until its challenge expires, then purged. */
export interface SpentProofsTable {
  id: string;
  expires_at: number;
}

/** Each channel's last delivery alert (migration 026): one per outage and hour, across instances. */
export interface DeliveryAlertsTable {
  channel: string;
  state: 'alerting' | 'recovered';
  alerted_at: number;
}

export interface Database {
  messages: MessagesTable;
  agent_claims: AgentClaimsTable;
  inquiries: InquiriesTable;
  idempotency_keys: IdempotencyKeysTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  delivery_successes: DeliverySuccessesTable;
  delivery_alerts: DeliveryAlertsTable;
  signing_keys: SigningKeysTable;
  agent_clients: AgentClientsTable;
  revoked_tokens: RevokedTokensTable;
  used_assertions: UsedAssertionsTable;
  claim_code_sends: ClaimCodeSendsTable;
  quarantine_digests: QuarantineDigestsTable;
  service_secrets: ServiceSecretsTable;
  spent_proofs: SpentProofsTable;
  oauth_clients: OAuthClientsTable;
  oauth_authorizations: OAuthAuthorizationsTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
}

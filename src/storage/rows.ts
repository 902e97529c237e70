// Rows as the tables hold them and records as the domain sees them: the conversions between the two.
import type { Selectable } from 'kysely';
import type { DeliveryAttempt, DeliveryRecord, IdempotencyEntry, InquiryJudgement, InquiryRecord, NewInquiry } from './ports.js';
import type { Database, IdempotencyKeysTable, NewInquiryRow } from './schema.js';

type InquiryRow = Selectable<Database['inquiries']>;
type DeliveryRow = Database['deliveries'];

/**
 * Every column of an inquiry the code reads: selected by name, as PostgreSQL's table also holds the
 * search's tsvector (migration 023), which no query needs back.
 */
export const INQUIRY_COLUMNS = [
  'reference',
  'first_name',
  'last_name',
  'email',
  'company',
  'message',
  'client_id',
  'fingerprint',
  'received_at',
  'verdict',
  'spam_score',
  'spam_reasons',
  'body_hash',
  'quarantined_at',
  'digest_id',
  'released_at',
  'source',
  'inbox_state',
] as const satisfies readonly (keyof Database['inquiries'])[];

/** What an inquiry judged by no rule is: the inbox (the filter off, or stored before it). */
export const UNJUDGED: InquiryJudgement = Object.freeze({ verdict: 'inbox', score: 0, reasons: [] });

export const toInquiry = (row: InquiryRow): InquiryRecord => ({
  reference: row.reference,
  firstName: row.first_name,
  lastName: row.last_name,
  email: row.email,
  company: row.company,
  message: row.message,
  clientId: row.client_id,
  receivedAt: new Date(Number(row.received_at)),
  source: row.source,
});

export const toJudgement = (
  row: Pick<InquiryRow, 'verdict' | 'spam_score' | 'spam_reasons'> & Partial<Pick<InquiryRow, 'released_at'>>,
): InquiryJudgement => ({
  verdict: row.verdict,
  score: Number(row.spam_score),
  reasons: JSON.parse(row.spam_reasons),
  ...(row.released_at != null && { releasedAt: new Date(Number(row.released_at)) }),
});

export function inquiryRow({ inquiry, fingerprint, bodyHash = null, judgement = UNJUDGED }: NewInquiry): NewInquiryRow {
  return {
    reference: inquiry.reference,
    first_name: inquiry.firstName,
    last_name: inquiry.lastName,
    email: inquiry.email,
    company: inquiry.company,
    message: inquiry.message,
    client_id: inquiry.clientId,
    source: inquiry.source,
    fingerprint,
    received_at: inquiry.receivedAt.getTime(),
    verdict: judgement.verdict,
    spam_score: judgement.score,
    spam_reasons: JSON.stringify(judgement.reasons),
    body_hash: bodyHash,
  };
}

export function idempotencyKeyRow(entry: IdempotencyEntry): IdempotencyKeysTable {
  return {
    key: entry.key,
    request_hash: entry.requestHash,
    reference: entry.reference,
    created_at: entry.createdAt.getTime(),
    outcome: entry.outcome,
  };
}

export function toIdempotencyEntry(row: IdempotencyKeysTable): IdempotencyEntry {
  return {
    key: row.key,
    requestHash: row.request_hash,
    reference: row.reference,
    createdAt: new Date(Number(row.created_at)),
    // A key stored before migration 009 kept no outcome: most first requests created their inquiry.
    outcome: row.outcome === 'duplicate' ? 'duplicate' : 'created',
  };
}

export const toDelivery = (row: Omit<DeliveryRow, 'attempts'> & { attempts: number }): DeliveryRecord => ({
  id: row.id,
  reference: row.reference,
  channel: row.channel,
  status: row.status,
  attempts: Number(row.attempts),
  runAt: new Date(Number(row.run_at)),
  lastError: row.last_error,
  queuedAt: new Date(Number(row.queued_at)),
  finishedAt: row.finished_at === null ? null : new Date(Number(row.finished_at)),
});

export const toAttempt = (row: Database['delivery_attempts']): DeliveryAttempt => ({
  attempt: Number(row.attempt),
  attemptedAt: new Date(Number(row.attempted_at)),
  outcome: row.outcome,
  error: row.error,
  durationMs: Number(row.duration_ms),
});

/** A new delivery, due now, of an inquiry (reference) or a service message (message_id). */
export function pendingDelivery(of: Pick<DeliveryRow, 'reference' | 'message_id' | 'channel'>, now: Date) {
  return {
    ...of,
    id: crypto.randomUUID(),
    status: 'pending' as const,
    run_at: now.getTime(),
    locked_until: null,
    locked_by: null,
    last_error: null,
    queued_at: now.getTime(),
    finished_at: null,
  };
}

/** The references of the new inquiries that go to the inbox: those delivered. */
export const inboxReferences = (items: readonly NewInquiry[]): string[] =>
  items.flatMap(({ inquiry, judgement = UNJUDGED }) => (judgement.verdict === 'inbox' ? [inquiry.reference] : []));

/** The pending deliveries of new inquiries: one per inquiry and channel. */
export function inquiryDeliveries(references: readonly string[], channels: readonly string[], now: Date) {
  return references.flatMap((reference) => channels.map((channel) => pendingDelivery({ reference, message_id: null, channel }, now)));
}

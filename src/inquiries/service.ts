// Accepting an inquiry: validate it, fold repeats, write it and its pending notifications in one
// durable transaction (the transactional outbox), then wake the delivery worker. Both doors, HTTP
// and MCP, call this one function.
import { createHash } from 'node:crypto';
import { IdempotencyConflictError, IdempotencyKeyError, InquiryNotStoredError, ValidationError } from '../errors.js';
import type { GroupCommitter } from '../storage/group-commit.js';
import type { InquiryRecord, Store, Tx } from '../storage/store.js';
import { ajv, toFieldErrors } from '../validation/ajv.js';
import { newReference } from './reference.js';
import { type InquiryInput, inquirySchema } from './schema.js';

/** An identical submission (same email and message) within this window folds into the first. */
export const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
/** An Idempotency-Key is remembered this long (then the maintenance task forgets it). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** References are random; a collision is rare, several in a row are practically impossible. */
const REFERENCE_ATTEMPTS = 5;

export const validateInquiry = ajv.compile<InquiryInput>(inquirySchema);

export interface SubmitOptions {
  readonly idempotencyKey?: string | undefined;
  /** The registered agent the inquiry came from (a verified bearer token), or null. */
  readonly clientId?: string | null;
}

export interface SubmitResult {
  readonly reference: string;
  readonly receivedAt: Date;
  /** created: new inquiry; duplicate: folded into a recent identical one; replayed: same Idempotency-Key. */
  readonly outcome: 'created' | 'duplicate' | 'replayed';
}

export interface InquiryServiceDeps {
  readonly store: Store;
  readonly committer: GroupCommitter;
  /** Names of the configured delivery channels: one outbox row each. */
  readonly channels: readonly string[];
  readonly now?: () => Date;
  /** Called after a commit that created deliveries. */
  readonly onEnqueued?: () => void;
}

export type InquiryService = ReturnType<typeof createInquiryService>;

export function createInquiryService({ store, committer, channels, now = () => new Date(), onEnqueued }: InquiryServiceDeps) {
  async function submit(input: unknown, options: SubmitOptions = {}): Promise<SubmitResult> {
    if (!validateInquiry(input)) throw new ValidationError(toFieldErrors(validateInquiry.errors ?? []));
    const key = options.idempotencyKey === undefined ? undefined : checkIdempotencyKey(options.idempotencyKey);
    const inquiry = input;
    const requestHash = key === undefined ? '' : hashJson(inquiry);
    const fingerprint = fingerprintOf(inquiry);

    let result: SubmitResult;
    try {
      result = await committer.run((tx) => write(tx, inquiry, fingerprint, key, requestHash, options.clientId ?? null));
    } catch (error) {
      if (error instanceof IdempotencyConflictError) throw error;
      throw new InquiryNotStoredError(error);
    }
    if (result.outcome === 'created' && channels.length > 0) onEnqueued?.();
    return result;
  }

  async function write(
    tx: Tx,
    inquiry: InquiryInput,
    fingerprint: string,
    key: string | undefined,
    requestHash: string,
    clientId: string | null,
  ): Promise<SubmitResult> {
    const receivedAt = now();
    if (key !== undefined) {
      const previous = await store.idempotency.find(key, tx);
      if (previous) {
        if (previous.requestHash !== requestHash) throw new IdempotencyConflictError();
        return { reference: previous.reference, receivedAt, outcome: 'replayed' };
      }
    }
    const remember = async (reference: string) => {
      if (key !== undefined) await store.idempotency.insert({ key, requestHash, reference, createdAt: receivedAt }, tx);
    };

    const duplicateOf = await store.inquiries.findRecentByFingerprint(
      fingerprint,
      new Date(receivedAt.getTime() - DUPLICATE_WINDOW_MS),
      tx,
    );
    if (duplicateOf !== undefined) {
      await remember(duplicateOf);
      return { reference: duplicateOf, receivedAt, outcome: 'duplicate' };
    }

    for (let attempt = 0; attempt < REFERENCE_ATTEMPTS; attempt++) {
      const record: InquiryRecord = {
        reference: newReference(),
        firstName: inquiry.firstName,
        lastName: inquiry.lastName,
        email: inquiry.email,
        company: inquiry.company ?? null,
        message: inquiry.message,
        clientId,
        receivedAt,
      };
      if (await store.inquiries.insert(record, fingerprint, tx)) {
        await store.outbox.enqueue(record.reference, channels, receivedAt, tx);
        await remember(record.reference);
        return { reference: record.reference, receivedAt, outcome: 'created' };
      }
    }
    throw new Error('could not allocate a unique inquiry reference');
  }

  return { submit, validate: validateInquiry };
}

/** Idempotency-Key is a Structured Field string (draft-ietf-httpapi-idempotency-key-header §2.1);
 * a bare token is accepted too, since many clients send one. */
export function checkIdempotencyKey(raw: string): string {
  const unquoted = /^"(.*)"$/.exec(raw)?.[1] ?? raw;
  if (unquoted.length === 0 || unquoted.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(unquoted)) {
    throw new IdempotencyKeyError(
      `Idempotency-Key must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, such as a UUID.`,
    );
  }
  return unquoted;
}

/** The same person sending the same brief: case-insensitive email, exact message. */
export function fingerprintOf(inquiry: Pick<InquiryInput, 'email' | 'message'>): string {
  return createHash('sha256').update(inquiry.email.trim().toLowerCase()).update('\u0000').update(inquiry.message).digest('hex');
}

/** Hash of a JSON value that does not depend on the order of object keys. */
export function hashJson(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

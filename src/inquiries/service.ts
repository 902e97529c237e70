// Accepting an inquiry: validate it, fold repeats, write it and its pending notifications in one
// durable transaction (the transactional outbox), then wake the delivery worker. Both doors, HTTP
// and MCP, call this one function.
import { createHash } from 'node:crypto';
import { IdempotencyConflictError, IdempotencyKeyError, InquiryNotStoredError, ValidationError } from '../errors.js';
import { type ContentReader, inProcessReader } from '../spam/content-reader.js';
import { bodyHashOf, otherSenders, REPEAT_SENDERS_COUNTED, REPEAT_WINDOW_MS, senderOf } from '../spam/repeats.js';
import type { ProofSignal, SpamSignals } from '../spam/types.js';
import { decide } from '../spam/verdict.js';
import { GroupCommitter } from '../storage/group-commit.js';
import type { IdempotencyEntry, InquiryJudgement, InquiryRecord, InquirySource, Store, Tx } from '../storage/ports.js';
import { ajv, type FieldError, toFieldErrors } from '../validation/ajv.js';
import { newReference } from './reference.js';
import { type InquiryInput, inquirySchema } from './schema.js';

/** An identical submission (same email and message) within this window folds into the first. */
export const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
/** An Idempotency-Key is remembered this long (then the maintenance task forgets it). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_KEY_PROBLEM = `Idempotency-Key must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces or double quotes (the key may be sent in quotes), such as a UUID.`;

export const validateInquiry = ajv.compile<InquiryInput>(inquirySchema);

export interface SubmitOptions {
  readonly idempotencyKey?: string | undefined;
  /** The door it came through; `api` unless said. */
  readonly source?: InquirySource;
  /** The registered agent the inquiry came from (a verified bearer token), or null. */
  readonly clientId?: string | null;
  /** That agent's registration was claimed (verified email or ID-JAG): the content rules do not count. */
  readonly trustedAgent?: boolean;
  /** The contact page's proof of work, checked (src/spam/proof-of-work.ts); `missing` when left out. */
  readonly proof?: ProofSignal;
  /** The contact page's hidden field was filled in (only a bot sees it). */
  readonly honeypot?: boolean;
}

export interface SubmitResult {
  readonly reference: string;
  readonly receivedAt: Date;
  /**
   * created: a new inquiry; duplicate: folded into a recent identical one. A replay answers what
   * the first request with its Idempotency-Key was answered.
   */
  readonly outcome: 'created' | 'duplicate';
  /** A replay: the same Idempotency-Key and body as an earlier request, answered the same. */
  readonly replayed: boolean;
}

/** How an accepted submission is counted (metrics): a replay apart from what it repeats. */
export type AcceptedAs = SubmitResult['outcome'] | 'replayed';

export interface InquiryServiceDeps {
  readonly store: Store;
  /** Names of the configured delivery channels: one outbox row each. */
  readonly channels: readonly string[];
  readonly now?: () => Date;
  /** Called after a commit that created deliveries. */
  readonly onEnqueued?: () => void;
  /** Called for every accepted submission, with its outcome (metrics). */
  readonly onAccepted?: (outcome: AcceptedAs) => void;
  /** Draws a random inquiry reference (newReference; a test may make them collide). */
  readonly drawReference?: () => string;
  /**
   * SPAM_FILTER: new inquiries are judged with this threshold (docs/spam.md), their content read by
   * `reader` (in-process unless given); null or left out = all inbox.
   */
  readonly spamFilter?: { readonly threshold: number; readonly reader?: ContentReader } | null;
  /** Called for every new inquiry committed, with its judgement (metrics). */
  readonly onJudged?: (judgement: InquiryJudgement) => void;
}

/** A new inquiry with the filter off: the inbox, as stored. */
const UNFILTERED: InquiryJudgement = Object.freeze({ verdict: 'inbox', score: 0, reasons: [] });

/** What a batch answers a submission: the result, with the judgement of the inquiry it created. */
type Decided = SubmitResult & { readonly judgement: InquiryJudgement | null };

/** A validated inquiry on its way into the group-committed write. */
interface Submission {
  readonly inquiry: InquiryInput;
  readonly key: string | undefined;
  readonly requestHash: string;
  readonly fingerprint: string;
  readonly clientId: string | null;
  readonly source: InquirySource;
  /** SHA-256 of its canonical message, or null for a short one (src/spam/repeats.ts). */
  readonly bodyHash: string | null;
  /**
   * Its spam verdict, given how many other addresses sent the same body within the window; the
   * content is read before the transaction. Called only if it is stored as a new inquiry.
   */
  readonly judge: ((repeatedFromOtherAddresses: number) => InquiryJudgement) | undefined;
}

export type InquiryService = ReturnType<typeof createInquiryService>;

export function createInquiryService({
  store,
  channels,
  now = () => new Date(),
  onEnqueued,
  onAccepted,
  drawReference = newReference,
  spamFilter = null,
  onJudged,
}: InquiryServiceDeps) {
  // Another instance (or lane) deciding about the same inquiry or key waits until this batch
  // commits, and then sees it: folding and idempotency hold across instances, not only within this
  // one. So batches may overlap.
  const committer = new GroupCommitter<Submission, Decided>(store, (tx, batch) => writeBatch(tx, batch), {
    concurrency: store.parallelWrites,
    lockNamesOf: decidedNames,
  });

  async function submit(input: unknown, options: SubmitOptions = {}): Promise<SubmitResult> {
    if (!validateInquiry(input)) throw new ValidationError(toFieldErrors(validateInquiry.errors ?? []));
    const key = options.idempotencyKey === undefined ? undefined : checkIdempotencyKey(options.idempotencyKey);
    const submission: Submission = {
      inquiry: input,
      key,
      requestHash: key === undefined ? '' : hashJson(input),
      fingerprint: fingerprintOf(input),
      clientId: options.clientId ?? null,
      source: options.source ?? 'api',
      bodyHash: bodyHashOf(input.message),
      judge: await judgementOf(input, {
        proof: options.proof ?? 'missing',
        honeypot: options.honeypot ?? false,
        trustedAgent: options.trustedAgent ?? false,
      }),
    };
    let decided: Decided;
    try {
      decided = await committer.run(submission);
    } catch (error) {
      if (error instanceof IdempotencyConflictError) throw error;
      throw new InquiryNotStoredError(error);
    }
    const { judgement, ...result } = decided;
    const isNew = !result.replayed && result.outcome === 'created';
    if (isNew) onJudged?.(judgement ?? UNFILTERED);
    if (isNew && judgement?.verdict !== 'spam' && channels.length > 0) onEnqueued?.();
    onAccepted?.(result.replayed ? 'replayed' : result.outcome);
    return result;
  }

  /**
   * Writes a batch in two rounds, each one statement (IntakeStore), since a batch costs its round trips
   * more than its rows: look up keys, recent fingerprints and free references; decide each submission in
   * arrival order (seeing the batch's earlier ones); then insert inquiries, deliveries and keys.
   */
  async function writeBatch(tx: Tx, batch: readonly Submission[]): Promise<(Decided | Error)[]> {
    const receivedAt = now();
    const keys = batch.flatMap((submission) => (submission.key === undefined ? [] : [submission.key]));
    const fingerprints = [...new Set(batch.map((submission) => submission.fingerprint))];
    const bodyHashes = [...new Set(batch.flatMap(({ bodyHash, judge }) => (bodyHash !== null && judge ? [bodyHash] : [])))];
    // Twice as many as it may need: where many references are taken (with tens of millions of
    // inquiries stored), the spare ones, checked too, stand in for those.
    const candidates = new Set<string>();
    while (candidates.size < 2 * batch.length) candidates.add(drawReference());
    const {
      keys: knownKeys,
      recent,
      taken,
      senders,
    } = await store.intake.lookup(
      {
        keys,
        fingerprints,
        since: new Date(receivedAt.getTime() - DUPLICATE_WINDOW_MS),
        references: [...candidates],
        ...(bodyHashes.length > 0 && {
          senders: { bodyHashes, since: new Date(receivedAt.getTime() - REPEAT_WINDOW_MS), limit: REPEAT_SENDERS_COUNTED },
        }),
      },
      tx,
    );
    /** Free references, checked; past them (more taken than spare), fresh ones, unchecked. */
    const free = [...candidates].filter((reference) => !taken.has(reference));
    const nextReference = () => free.shift() ?? uniqueReference(candidates, drawReference);

    // Each decision points at a slot: the reference it answers with.
    type Slot = { reference: string; judgement?: InquiryJudgement };
    type Decision = { slot: Slot; outcome: SubmitResult['outcome']; replayed: boolean };
    const decisions: (Decision | Error)[] = [];
    const claimedKeys = new Map<string, { requestHash: string; slot: Slot; outcome: SubmitResult['outcome'] }>();
    const byFingerprint = new Map<string, Slot>([...recent].map(([fingerprint, reference]) => [fingerprint, { reference }]));
    const created: { slot: Slot; submission: Submission }[] = [];

    for (const submission of batch) {
      if (submission.key !== undefined) {
        const known = knownKeys.get(submission.key);
        const previous = known
          ? { requestHash: known.requestHash, slot: { reference: known.reference }, outcome: known.outcome }
          : claimedKeys.get(submission.key);
        if (previous) {
          decisions.push(
            previous.requestHash === submission.requestHash
              ? { slot: previous.slot, outcome: previous.outcome, replayed: true }
              : new IdempotencyConflictError(),
          );
          continue;
        }
      }
      let slot = byFingerprint.get(submission.fingerprint);
      const outcome = slot ? 'duplicate' : 'created';
      if (!slot) {
        slot = { reference: nextReference(), judgement: judgeInBatch(submission, senders) };
        byFingerprint.set(submission.fingerprint, slot);
        created.push({ slot, submission });
      }
      // A duplicate keeps the verdict of the inquiry it folds into: only a new one is judged.
      decisions.push({ slot, outcome, replayed: false });
      if (submission.key !== undefined) claimedKeys.set(submission.key, { requestHash: submission.requestHash, slot, outcome });
    }

    const inserted = await store.intake.write(
      {
        inquiries: created.map(({ slot, submission }) => ({
          inquiry: toRecord(slot.reference, submission, receivedAt),
          fingerprint: submission.fingerprint,
          bodyHash: submission.bodyHash,
          ...(slot.judgement && { judgement: slot.judgement }),
        })),
        channels,
        keys: [...claimedKeys].map(([key, { requestHash, slot, outcome }]) => ({
          key,
          requestHash,
          reference: slot.reference,
          createdAt: receivedAt,
          outcome,
        })),
        now: receivedAt,
      },
      tx,
    );
    // Taken since it was checked (by another transaction, at the same moment), or drawn unchecked
    // and taken: the deliveries and keys written beside it would belong to another inquiry. The
    // transaction must not commit; each submission is then tried alone (GroupCommitter), drawing anew.
    if (created.some(({ slot }) => !inserted.has(slot.reference))) throw new ReferenceTakenError();
    return decisions.map((decision) =>
      decision instanceof Error
        ? decision
        : {
            reference: decision.slot.reference,
            receivedAt,
            outcome: decision.outcome,
            replayed: decision.replayed,
            judgement: decision.outcome === 'created' && !decision.replayed ? (decision.slot.judgement ?? null) : null,
          },
    );
  }

  /**
   * The spam rules' judgement (docs/spam.md) once the repeats are counted, or none with the filter
   * off. The content is read now, outside the batch's transaction.
   */
  async function judgementOf(
    inquiry: InquiryInput,
    signals: Omit<SpamSignals, 'repeatedFromOtherAddresses'>,
  ): Promise<Submission['judge']> {
    if (spamFilter === null) return undefined;
    const company = inquiry.company?.trim() ? inquiry.company : null;
    const { firstName, lastName, email, message } = inquiry;
    const content = await (spamFilter.reader ?? inProcessReader).read({ firstName, lastName, email, company, message });
    return (repeatedFromOtherAddresses) => decide(content, { ...signals, repeatedFromOtherAddresses }, { threshold: spamFilter.threshold });
  }

  /** Every bad field of `input` as {pointer, detail}; empty when it is a valid inquiry. */
  function fieldErrors(input: unknown): FieldError[] {
    return validateInquiry(input) ? [] : toFieldErrors(validateInquiry.errors ?? []);
  }

  /**
   * A retry's answer, read without writing (a used key is only replayed or refused), so that retries
   * neither count against the rate limit nor take the write lock. null for no key, a key not seen,
   * input that is not an inquiry, or a database that cannot say: the batch then looks again.
   */
  async function answerRetry(input: unknown, key: string | undefined): Promise<SubmitResult | null> {
    if (key === undefined || !validateInquiry(input)) return null;
    const checked = checkIdempotencyKey(key);
    let known: IdempotencyEntry | undefined;
    try {
      known = (await store.idempotency.findMany([checked])).get(checked);
    } catch {
      return null;
    }
    if (known === undefined) return null;
    if (known.requestHash !== hashJson(input)) throw new IdempotencyConflictError();
    onAccepted?.('replayed');
    return { reference: known.reference, receivedAt: now(), outcome: known.outcome, replayed: true };
  }

  return { submit, fieldErrors, answerRetry };
}

/**
 * A new inquiry's judgement, counting the other senders of its body: those stored within the window
 * and the batch's earlier new inquiries (`senders` gains this one's address).
 */
function judgeInBatch({ judge, bodyHash, inquiry }: Submission, senders: Map<string, Set<string>>): InquiryJudgement | undefined {
  if (!judge) return undefined;
  if (bodyHash === null) return judge(0);
  const known = senders.get(bodyHash) ?? new Set<string>();
  senders.set(bodyHash, known);
  const judgement = judge(otherSenders(known, inquiry.email));
  known.add(senderOf(inquiry.email));
  return judgement;
}

/** What a batch decides about: the inquiries it may fold into (by fingerprint) and its idempotency keys. */
function decidedNames(batch: readonly Submission[]): string[] {
  return batch.flatMap(({ fingerprint, key }) =>
    key === undefined ? [`inquiry:${fingerprint}`] : [`inquiry:${fingerprint}`, `key:${key}`],
  );
}

function uniqueReference(used: Set<string>, draw: () => string): string {
  let reference = draw();
  while (used.has(reference)) reference = draw();
  used.add(reference);
  return reference;
}

/**
 * A fresh reference turned out to be taken when its inquiry was inserted. Its code is that of a
 * unique violation (SQLSTATE 23505), which it stands for: the batch is rolled back and each of its
 * submissions tried alone (causedByAnItem).
 */
export class ReferenceTakenError extends Error {
  readonly code = '23505';
  constructor() {
    super('an inquiry reference drawn for this batch is taken');
  }
}

function toRecord(reference: string, { inquiry, clientId, source }: Submission, receivedAt: Date): InquiryRecord {
  return {
    reference,
    firstName: inquiry.firstName,
    lastName: inquiry.lastName,
    email: inquiry.email,
    // Optional: a blank one ("", "   ", what a form sends for a field left empty) is none, so the
    // studio's mail shows "—" and the webhook null, as for one left out.
    company: inquiry.company?.trim() ? inquiry.company : null,
    message: inquiry.message,
    clientId,
    receivedAt,
    source,
  };
}

/** Idempotency-Key is a Structured Field string (draft-ietf-httpapi-idempotency-key-header §2.1);
 * a bare token is accepted too, since many clients send one. */
export function checkIdempotencyKey(raw: string): string {
  const unquoted = /^"(.*)"$/.exec(raw)?.[1] ?? raw;
  // A double quote only around the key (a structured-field string), never in it: `"` or `"a"b"`
  // would be keys no client meant, and the MCP tool's argument has the same rule.
  if (unquoted.length === 0 || unquoted.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21\x23-\x7e]+$/.test(unquoted)) {
    throw new IdempotencyKeyError(IDEMPOTENCY_KEY_PROBLEM);
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

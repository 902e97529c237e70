// The delivery outbox: deliveries queued with the data that causes them, claimed with a lease (FOR
// UPDATE SKIP LOCKED on PostgreSQL), attempted, recorded, retried or finished, and re-queued.
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import { ACROSS_PROCESSES, inChunks } from './bulk.js';
import { type Dialect, inTransaction } from './database.js';
import { insertDeliveries } from './postgres-batch.js';
import { toInquiry } from './rows.js';
import type { Database, DeliveryStatus } from './schema.js';
import type { InquiryRecord, Tx } from './store.js';

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

/** Mail the service itself sends (a claim code), through the same outbox as inquiries. */
export interface ServiceMessage {
  readonly id: string;
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
 * One attempt to record: which delivery, by which worker, how it went, and what follows from it.
 * It is recorded only while that worker still holds the delivery's lease: one whose lease ran out
 * and was taken over by another cannot overwrite the outcome the other records.
 */
export interface AttemptRecord {
  readonly deliveryId: string;
  /** The claiming worker's id (claimDue's `owner`). */
  readonly owner: string;
  /**
   * The delivery's attempt count when it was claimed. Any recorded attempt raises it, so a record
   * written twice (a retry after a commit whose answer was lost), or a late one after another
   * attempt was recorded meanwhile, is refused even where the lease is this worker's again.
   */
  readonly attempts: number;
  readonly attempt: Omit<DeliveryAttempt, 'attempt'>;
  readonly result: AttemptOutcome;
}

export type AttemptOutcome =
  | { readonly outcome: 'succeeded' }
  | { readonly outcome: 'retry'; readonly error: string; readonly runAt: Date }
  | { readonly outcome: 'failed' | 'dead'; readonly error: string };

export interface Outbox {
  /** One pending delivery per reference and channel. */
  enqueue(references: readonly string[], channels: readonly string[], now: Date, tx?: Tx): Promise<void>;
  /** Queues a service message for one channel (in the caller's transaction, if given). */
  enqueueMessage(message: ServiceMessage, channel: string, now: Date, tx?: Tx): Promise<void>;
  /**
   * Leases due pending deliveries to `owner` until `now + leaseMs` (a delivery whose lease has run
   * out may be claimed again, by any worker): up to `limit` of any channel, or, per channel, up to
   * the number given for it (the others' are left alone).
   */
  claimDue(now: Date, limit: number | ReadonlyMap<string, number>, leaseMs: number, owner: string): Promise<DueDelivery[]>;
  /**
   * Records one attempt and its consequence, releasing the lease. False, and nothing written, when
   * the delivery is no longer leased to the record's owner (its lease ran out and another worker
   * claimed it, or this outcome was recorded already).
   */
  recordAttempt(record: AttemptRecord, tx?: Tx): Promise<boolean>;
  /**
   * Records many attempts in the caller's transaction; for each, whether it was recorded (as
   * recordAttempt). Successes, nearly all of them, are written together (see recordTogether); the
   * others one by one.
   */
  recordAttempts(records: readonly AttemptRecord[], tx: Tx): Promise<boolean[]>;
  /**
   * Extends to `until` the leases `owner` still holds on these deliveries (a worker's sends that are
   * waiting or running); returns the ids of those renewed. One another worker has taken over, or
   * whose attempt is recorded, is left alone (and not among them).
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
}

type DeliveryRow = Database['deliveries'];

const toDelivery = (row: Omit<DeliveryRow, 'attempts'> & { attempts: number }): DeliveryRecord => ({
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

/** Keeps attempt errors readable in the CLI and bounded in the database. */
const ERROR_TEXT_MAX_LENGTH = 1_000;

/**
 * An error as stored: at most ERROR_TEXT_MAX_LENGTH characters, NUL replaced with U+FFFD. The text
 * comes from the other side (an SMTP reply, a receiver's answer), and PostgreSQL refuses NUL in
 * text: the attempt could never be recorded, and the delivery would stay in flight for good.
 */
function errorText(error: string): string {
  return error.slice(0, ERROR_TEXT_MAX_LENGTH).replaceAll('\u0000', '\ufffd');
}

/** A new delivery, due now, of an inquiry (reference) or a service message (message_id). */
function pendingDelivery(of: Pick<DeliveryRow, 'reference' | 'message_id' | 'channel'>, now: Date) {
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

/** The pending deliveries of new inquiries: one per inquiry and channel. */
export function inquiryDeliveries(references: readonly string[], channels: readonly string[], now: Date) {
  return references.flatMap((reference) => channels.map((channel) => pendingDelivery({ reference, message_id: null, channel }, now)));
}

/**
 * Deliveries still leased to `owner`. The id list comes first so that SQLite looks the rows up by
 * primary key (with a condition on status first, it would scan every pending delivery instead).
 */
function heldBy(deliveryIds: readonly string[], owner: string, attempts?: number) {
  return (eb: ExpressionBuilder<Database, 'deliveries'>) =>
    eb.and([
      eb('id', 'in', deliveryIds),
      eb('locked_by', '=', owner),
      eb('locked_until', 'is not', null),
      ...(attempts === undefined ? [] : [eb('attempts', '=', attempts)]),
    ]);
}

/**
 * Records attempts that share their owner, their claimed attempt count and their outcome (one
 * attempt, or a batch of successes) in at most three statements; returns the deliveries written,
 * those still held under the claim (heldBy), with their channels. Their deliveries share one
 * finished_at, when the last of their sends ended; each attempt row keeps its own time and duration.
 */
async function recordTogether(trx: Kysely<Database>, records: readonly AttemptRecord[]): Promise<Map<string, string>> {
  const [{ owner, attempts, result }] = records as [AttemptRecord];
  const finishedAt = Math.max(...records.map(({ attempt }) => Math.round(attempt.attemptedAt.getTime() + attempt.durationMs)));
  const updated = await trx
    .updateTable('deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      locked_until: null,
      locked_by: null,
      status: result.outcome === 'retry' ? 'pending' : result.outcome,
      run_at: result.outcome === 'retry' ? result.runAt.getTime() : eb.ref('run_at'),
      last_error: result.outcome === 'succeeded' ? null : errorText(result.error),
      finished_at: result.outcome === 'retry' ? null : finishedAt,
    }))
    .where(
      heldBy(
        records.map((record) => record.deliveryId),
        owner,
        attempts,
      ),
    )
    .returning(['id', 'attempts', 'message_id', 'channel'])
    .execute();
  if (updated.length === 0) return new Map();
  // A finished service message keeps its envelope for the record, not its one-time code.
  const messageIds = updated.flatMap((row) => (row.message_id === null ? [] : [row.message_id]));
  if (messageIds.length > 0 && result.outcome !== 'retry') {
    await trx.updateTable('messages').set({ body: '' }).where('id', 'in', messageIds).execute();
  }
  const attemptNumbers = new Map(updated.map((row) => [row.id, Number(row.attempts)]));
  await trx
    .insertInto('delivery_attempts')
    .values(
      records.flatMap(({ deliveryId, attempt }) => {
        const number = attemptNumbers.get(deliveryId);
        if (number === undefined) return [];
        return [
          {
            delivery_id: deliveryId,
            attempt: number,
            attempted_at: attempt.attemptedAt.getTime(),
            outcome: attempt.outcome,
            error: attempt.error === null ? null : errorText(attempt.error),
            duration_ms: Math.round(attempt.durationMs),
          },
        ];
      }),
    )
    .execute();
  return new Map(updated.map((row) => [row.id, row.channel]));
}

/**
 * Adds recorded successes to their channels' counts (delivery_successes), in the transaction that
 * records them. It comes last in that transaction and takes the channels' rows in one order, so
 * on PostgreSQL two recording transactions never each hold a row the other waits for.
 */
async function countSuccesses(trx: Kysely<Database>, channels: readonly string[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const channel of channels) counts.set(channel, (counts.get(channel) ?? 0) + 1);
  if (counts.size === 0) return;
  await trx
    .insertInto('delivery_successes')
    .values([...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([channel, count]) => ({ channel, count })))
    .onConflict((oc) =>
      oc.column('channel').doUpdateSet((eb) => ({ count: eb('delivery_successes.count', '+', eb.ref('excluded.count')) })),
    )
    .execute();
}

/**
 * The ids of the oldest due, unleased deliveries: service messages only, or inquiries only; of
 * one channel, or of all. Each kind has its index (status, channel, run_at): the service messages'
 * is partial (migration 011), so a claim of them never walks an inquiry backlog.
 */
export function dueDeliveries(
  db: Kysely<Database>,
  { at, count, messagesOnly, channel }: { at: number; count: number; messagesOnly: boolean; channel: string | undefined },
) {
  return db
    .selectFrom('deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('run_at', '<=', at)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
    .where('message_id', messagesOnly ? 'is not' : 'is', null)
    .$if(channel !== undefined, (query) => query.where('channel', '=', channel as string))
    .orderBy('run_at')
    .limit(count);
}

export function createOutbox(db: Kysely<Database>, dialect: Dialect, q: (tx?: Tx) => Kysely<Database>): Outbox {
  const outbox: Outbox = {
    async enqueue(references, channels, now, tx) {
      const rows = inquiryDeliveries(references, channels, now);
      if (rows.length === 0) return;
      if (dialect === 'postgres') await insertDeliveries(q(tx), rows);
      else await q(tx).insertInto('deliveries').values(rows).execute();
    },
    async claimDue(now, limit, leaseMs, owner) {
      const at = now.getTime();
      // What the claimed deliveries carry is read in the claim's transaction: if that read fails
      // (the database went away), the claim is rolled back instead of holding them for a lease.
      // A claim need not be durable: one lost with the machine's power is claimed again.
      const { claimed, inquiryRows, messageRows } = await inTransaction(
        db,
        dialect,
        async (trx) => {
          const claim = (count: number, messagesOnly: boolean, channel: string | undefined) => {
            const due = dueDeliveries(trx, { at, count, messagesOnly, channel });
            return trx
              .updateTable('deliveries')
              .set({ locked_until: at + leaseMs, locked_by: owner })
              .where('id', 'in', dialect === 'postgres' ? due.forUpdate().skipLocked() : due)
              .returningAll()
              .execute();
          };
          // Service messages first (a person is waiting for a code that expires), then the oldest
          // due inquiry deliveries: two disjoint sets, so no row is claimed twice.
          const claimGroup = async (count: number, channel?: string) => {
            const messages = await claim(count, true, channel);
            return messages.length < count ? [...messages, ...(await claim(count - messages.length, false, channel))] : messages;
          };
          const claimed = typeof limit === 'number' ? await claimGroup(limit) : [];
          if (typeof limit !== 'number')
            for (const [channel, count] of limit) if (count > 0) claimed.push(...(await claimGroup(count, channel)));
          const references = [...new Set(claimed.flatMap((row) => (row.reference === null ? [] : [row.reference])))];
          const messageIds = claimed.flatMap((row) => (row.message_id === null ? [] : [row.message_id]));
          const inquiryRows = references.length
            ? await trx.selectFrom('inquiries').selectAll().where('reference', 'in', references).execute()
            : [];
          const messageRows = messageIds.length ? await trx.selectFrom('messages').selectAll().where('id', 'in', messageIds).execute() : [];
          return { claimed, inquiryRows, messageRows };
        },
        { durable: false },
      );
      const inquiriesByReference = new Map(inquiryRows.map((row) => [row.reference, toInquiry(row)]));
      const messagesById = new Map(
        messageRows.map((row) => [row.id, { id: row.id, to: row.to_address, subject: row.subject, body: row.body }]),
      );
      return claimed.flatMap((row): DueDelivery[] => {
        const inquiry = row.reference === null ? undefined : inquiriesByReference.get(row.reference);
        if (inquiry) return [{ delivery: toDelivery(row), payload: { kind: 'inquiry', inquiry } }];
        const message = row.message_id === null ? undefined : messagesById.get(row.message_id);
        return message ? [{ delivery: toDelivery(row), payload: { kind: 'message', message } }] : [];
      });
    },
    async enqueueMessage(message, channel, now, tx) {
      const write = async (trx: Kysely<Database>) => {
        await trx
          .insertInto('messages')
          .values({ id: message.id, to_address: message.to, subject: message.subject, body: message.body, created_at: now.getTime() })
          .execute();
        await trx
          .insertInto('deliveries')
          .values(pendingDelivery({ reference: null, message_id: message.id, channel }, now))
          .execute();
      };
      await (tx ? write(q(tx)) : db.transaction().execute(write));
    },
    async recordAttempt(record, tx) {
      // Writes that belong together: in the caller's transaction, or in one of their own.
      const recordOne = (trx: Tx) => outbox.recordAttempts([record], trx);
      const [written] = await (tx ? recordOne(tx) : db.transaction().execute((trx) => recordOne(trx as unknown as Tx)));
      return written === true;
    },
    async recordAttempts(records, tx) {
      // Successes go together per owner and attempt count: in practice one group (one worker
      // records its own attempts, and most succeed on their first). Other outcomes go one by one.
      const groups = new Map<string, AttemptRecord[]>();
      for (const record of records) {
        const key = record.result.outcome === 'succeeded' ? `${record.attempts} ${record.owner}` : record.deliveryId;
        const group = groups.get(key);
        if (group) group.push(record);
        else groups.set(key, [record]);
      }
      const written = new Set<string>();
      const succeeded: string[] = [];
      for (const group of groups.values()) {
        const successes = group[0]?.result.outcome === 'succeeded';
        for (const [id, channel] of await recordTogether(q(tx), group)) {
          written.add(id);
          if (successes) succeeded.push(channel);
        }
      }
      await countSuccesses(q(tx), succeeded);
      return records.map((record) => written.has(record.deliveryId));
    },
    async renewLeases(deliveryIds, owner, until) {
      if (deliveryIds.length === 0) return [];
      // heldBy is the fence. On PostgreSQL a row locked right now is skipped, not waited for: it is
      // being recorded (its lease ends with that) or claimed by another worker (it is no longer ours),
      // and an UPDATE taking the rows one by one would deadlock with an attempt record that holds
      // one of them and asks for another.
      const held = db.selectFrom('deliveries').select('id').where(heldBy(deliveryIds, owner));
      const renewed = await db
        .updateTable('deliveries')
        .set({ locked_until: until.getTime() })
        .where('id', 'in', dialect === 'postgres' ? held.forUpdate().skipLocked() : held)
        .returning('id')
        .execute();
      return renewed.map((row) => row.id);
    },
    async releaseClaims(deliveryIds, owner) {
      if (deliveryIds.length === 0) return;
      await db.updateTable('deliveries').set({ locked_until: null, locked_by: null }).where(heldBy(deliveryIds, owner)).execute();
    },
    async releaseLeases() {
      // Only those leased: after a burst, rewriting every pending row held the write lock for ~0.2 s per 500,000.
      await db
        .updateTable('deliveries')
        .set({ locked_until: null, locked_by: null })
        .where('status', '=', 'pending')
        .where('locked_until', 'is not', null)
        .execute();
    },
    async requeue(now, reference) {
      // Through the failed and dead deliveries once, in id order: one re-queued and failed again
      // while this runs is not taken a second time.
      let after = '';
      return inChunks(ACROSS_PROCESSES[dialect], async (limit) => {
        let chosen = db
          .selectFrom('deliveries')
          .select('id')
          .where('status', 'in', ['failed', 'dead'])
          .where('id', '>', after)
          .orderBy('id')
          .limit(limit);
        // Without a reference: every inquiry delivery, never service mail (a code mailed long ago is
        // stale, and its body is gone).
        chosen = reference !== undefined ? chosen.where('reference', '=', reference) : chosen.where('reference', 'is not', null);
        const ids = (await chosen.execute()).map((row) => row.id);
        if (ids.length === 0) return { seen: 0, changed: 0 };
        after = ids[ids.length - 1] as string;
        const result = await db
          .updateTable('deliveries')
          // A fresh retry window, tried at once: a re-queued delivery is retried as long as a new one. Its
          // attempts stay counted (they number its records and fence them), so later waits keep their spacing.
          .set({
            status: 'pending',
            run_at: now.getTime(),
            queued_at: now.getTime(),
            locked_until: null,
            locked_by: null,
            finished_at: null,
          })
          .where('id', 'in', ids)
          .where('status', 'in', ['failed', 'dead'])
          .executeTakeFirst();
        return { seen: ids.length, changed: Number(result.numUpdatedRows) };
      });
    },
    async forReference(reference) {
      return outbox.forReferences([reference]);
    },
    async forReferences(references) {
      if (references.length === 0) return [];
      const rows = await db.selectFrom('deliveries').selectAll().where('reference', 'in', references).orderBy('channel').execute();
      return rows.map(toDelivery);
    },
    async attempts(deliveryId) {
      const rows = await db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
      return rows.map((row) => ({
        attempt: Number(row.attempt),
        attemptedAt: new Date(Number(row.attempted_at)),
        outcome: row.outcome,
        error: row.error,
        durationMs: Number(row.duration_ms),
      }));
    },
    async countByChannelAndStatus() {
      // Successes from their counts; the rest by counting rows, through the status index: a cost
      // that follows the deliveries not yet done (a backlog), not every delivery ever made. One
      // statement, so one snapshot: a batch recorded meanwhile is not counted twice or not at all.
      const rows = await db
        .selectFrom('deliveries')
        .select(['channel', 'status', (eb) => eb.fn.countAll<number>().as('count')])
        .where('status', 'in', ['pending', 'failed', 'dead'])
        .groupBy(['channel', 'status'])
        .unionAll(db.selectFrom('delivery_successes').select(['channel', sql<DeliveryStatus>`'succeeded'`.as('status'), 'count']))
        .execute();
      return rows.map((row) => ({ channel: row.channel, status: row.status, count: Number(row.count) }));
    },
    async countByStatus() {
      const counts: Record<DeliveryStatus, number> = { pending: 0, succeeded: 0, failed: 0, dead: 0 };
      for (const { status, count } of await outbox.countByChannelAndStatus()) counts[status] += count;
      return counts;
    },
  };

  return outbox;
}

// The storage ports the domain uses (inquiries, idempotency keys; the outbox is in outbox.ts) and their
// Kysely implementation. Every method takes an optional transaction so that several writes can be
// committed together; the domain never sees Kysely itself, only the opaque `Tx`.
import type { Kysely, Transaction } from 'kysely';
import { type AuthStore, createAuthStore } from './auth-store.js';
import { IN_PROCESS, inChunks } from './bulk.js';
import { type Dialect, inTransaction, type OpenDatabase, type TransactionOptions } from './database.js';
import { createOutbox, inquiryDeliveries, type Outbox } from './outbox.js';
import * as onPostgres from './postgres-batch.js';
import { toInquiry } from './rows.js';
import type { Database, IdempotencyKeysTable, InquiriesTable } from './schema.js';

export type {
  AttemptOutcome,
  AttemptRecord,
  DeliveryAttempt,
  DeliveryRecord,
  DueDelivery,
  Outbox,
  Outgoing,
  ServiceMessage,
} from './outbox.js';
export type { DeliveryStatus } from './schema.js';

const POSTGRES_PARALLEL_WRITES = 4;

/** An open transaction, passed back into store methods. */
export type Tx = { readonly __brand: 'Tx' };

export interface InquiryRecord {
  readonly reference: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly company: string | null;
  readonly message: string;
  readonly clientId: string | null;
  readonly receivedAt: Date;
}

export interface NewInquiry {
  readonly inquiry: InquiryRecord;
  /** SHA-256 of the normalised email and message: finds a repeated submission. */
  readonly fingerprint: string;
}

export interface InquiryStore {
  /** Inserts those whose reference is free; returns the references inserted. */
  insertMany(inquiries: readonly NewInquiry[], tx?: Tx): Promise<Set<string>>;
  findByReference(reference: string, tx?: Tx): Promise<InquiryRecord | undefined>;
  /** Those of `references` that an inquiry has already. */
  takenReferences(references: readonly string[], tx?: Tx): Promise<Set<string>>;
  /**
   * For each fingerprint, the earliest inquiry received at or after `since` that has it (of several
   * received in the same millisecond, the one whose reference sorts first), on either database.
   */
  findRecentByFingerprints(fingerprints: readonly string[], since: Date, tx?: Tx): Promise<Map<string, string>>;
  /**
   * Newest first (of equal times, by reference); with `after`, those that come after that inquiry
   * in this order: a page of a listing that goes on where the last page ended, however many there are.
   */
  list(options: { limit: number; since?: Date; after?: Pick<InquiryRecord, 'receivedAt' | 'reference'> }): Promise<InquiryRecord[]>;
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
}

export interface IntakeFacts {
  /** The stored entries of the query's keys. */
  readonly keys: Map<string, IdempotencyEntry>;
  /** By fingerprint, the reference of the inquiry a repeat folds into (as findRecentByFingerprints). */
  readonly recent: Map<string, string>;
  /** The query's references that an inquiry has already. */
  readonly taken: Set<string>;
}

/** What a batch of submissions writes (IntakeStore.write). */
export interface IntakeWrites {
  readonly inquiries: readonly NewInquiry[];
  /** One pending delivery per new inquiry and channel. */
  readonly channels: readonly string[];
  readonly keys: readonly IdempotencyEntry[];
  readonly now: Date;
}

/**
 * An intake batch's reads and writes, each as one unit: on PostgreSQL each is one statement (a
 * statement costs both sides as much as several inquiries do); elsewhere they are the methods of
 * the other stores.
 */
export interface IntakeStore {
  lookup(query: IntakeQuery, tx: Tx): Promise<IntakeFacts>;
  /** Inserts the inquiries whose reference is free, their deliveries and the keys; returns the references inserted. */
  write(writes: IntakeWrites, tx: Tx): Promise<Set<string>>;
}

export interface Store {
  readonly dialect: Dialect;
  /**
   * Write transactions worth running at once: SQLite has one writer; PostgreSQL runs them in
   * parallel, and each overlaps the others' network round trips and commits (measured side by side
   * on 2 cores with the server beside the service and delivery running: two give ~25 % more
   * inquiries a second than one, four ~20 % more than two).
   */
  readonly parallelWrites: number;
  readonly auth: AuthStore;
  readonly inquiries: InquiryStore;
  readonly idempotency: IdempotencyStore;
  readonly intake: IntakeStore;
  readonly outbox: Outbox;
  /**
   * A durable transaction unless `durable: false`; with `lock`, concurrent transactions locking any
   * of the same names run one after the other, across processes (see TransactionOptions).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `callback` once `tx` has committed (never if it rolls back): how work queued inside a
   * transaction, such as a mail in the outbox, wakes whoever sends it. The callback must not throw.
   */
  afterCommit(tx: Tx, callback: () => void): void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createStore({ db, dialect, ping }: OpenDatabase): Store {
  const q = (tx?: Tx): Kysely<Database> => (tx as unknown as Transaction<Database> | undefined) ?? db;
  /** The statements an intake batch runs have texts of their own there (postgres-batch.ts). */
  const postgres = dialect === 'postgres';

  /**
   * On PostgreSQL every read of an intake's facts is the one statement of lookupIntake (the per-table
   * reads too, with the lists they do not ask about left empty): one text, one fold rule.
   */
  async function lookupOnPostgres(
    { keys = [], fingerprints = [], since = new Date(0), references = [] }: Partial<IntakeQuery>,
    tx?: Tx,
  ): Promise<IntakeFacts> {
    const facts: IntakeFacts = { keys: new Map(), recent: new Map(), taken: new Set() };
    for (const row of await onPostgres.lookupIntake(q(tx), { keys, fingerprints, since: since.getTime(), references })) {
      if (row.kind === 'key') facts.keys.set(row.key, toIdempotencyEntry(row));
      else if (row.kind === 'recent') facts.recent.set(row.key, row.reference);
      else facts.taken.add(row.reference);
    }
    return facts;
  }

  const inquiries: InquiryStore = {
    async insertMany(items, tx) {
      if (items.length === 0) return new Set();
      const rows = items.map(inquiryRow);
      if (postgres) return new Set(await onPostgres.insertInquiries(q(tx), rows));
      const inserted = await q(tx)
        .insertInto('inquiries')
        .values(rows)
        .onConflict((oc) => oc.column('reference').doNothing())
        .returning('reference')
        .execute();
      return new Set(inserted.map((row) => row.reference));
    },
    async findByReference(reference, tx) {
      const row = await q(tx).selectFrom('inquiries').selectAll().where('reference', '=', reference).executeTakeFirst();
      return row && toInquiry(row);
    },
    async takenReferences(references, tx) {
      if (references.length === 0) return new Set();
      if (postgres) return (await lookupOnPostgres({ references }, tx)).taken;
      const rows = await q(tx).selectFrom('inquiries').select('reference').where('reference', 'in', references).execute();
      return new Set(rows.map((row) => row.reference));
    },
    async countReceivedSince(since, limit) {
      const recent = db.selectFrom('inquiries').select('reference').where('received_at', '>', since.getTime()).limit(limit);
      const row = await db
        .selectFrom(recent.as('recent'))
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async findRecentByFingerprints(fingerprints, since, tx) {
      const found = new Map<string, string>();
      if (fingerprints.length === 0) return found;
      if (postgres) return (await lookupOnPostgres({ fingerprints, since }, tx)).recent;
      const rows = await q(tx)
        .selectFrom('inquiries')
        .select(['fingerprint', 'reference'])
        .where('fingerprint', 'in', fingerprints)
        .where('received_at', '>=', since.getTime())
        .orderBy('received_at', 'desc')
        .orderBy('reference', 'desc')
        .execute();
      for (const row of rows) found.set(row.fingerprint, row.reference); // the earliest wins, of equal times the first reference
      return found;
    },
    async list({ limit, since, after }) {
      let query = db.selectFrom('inquiries').selectAll();
      if (since) query = query.where('received_at', '>=', since.getTime());
      if (after) {
        const at = after.receivedAt.getTime();
        // The bound on received_at alone first, so that an index on it reads only the rows left.
        query = query
          .where('received_at', '<=', at)
          .where((eb) => eb.or([eb('received_at', '<', at), eb('reference', '>', after.reference)]));
      }
      const rows = await query.orderBy('received_at', 'desc').orderBy('reference').limit(limit).execute();
      return rows.map(toInquiry);
    },
  };

  const idempotency: IdempotencyStore = {
    async findMany(keys, tx) {
      const found = new Map<string, IdempotencyEntry>();
      if (keys.length === 0) return found;
      if (postgres) return (await lookupOnPostgres({ keys }, tx)).keys;
      const rows = await q(tx).selectFrom('idempotency_keys').selectAll().where('key', 'in', keys).execute();
      for (const row of rows) found.set(row.key, toIdempotencyEntry(row));
      return found;
    },
    async insertMany(entries, tx) {
      if (entries.length === 0) return;
      const rows = entries.map(idempotencyKeyRow);
      if (postgres) await onPostgres.insertIdempotencyKeys(q(tx), rows);
      else await q(tx).insertInto('idempotency_keys').values(rows).execute();
    },
    async deleteOlderThan(cutoff) {
      // In chunks (bulk.ts): after a day at 100 keyed inquiries a second, one statement held
      // SQLite's writer, and the event loop, for 1.3 s.
      return inChunks(IN_PROCESS, async (limit) => {
        const expired = db.selectFrom('idempotency_keys').select('key').where('created_at', '<', cutoff.getTime()).limit(limit);
        const result = await db.deleteFrom('idempotency_keys').where('key', 'in', expired).executeTakeFirst();
        // Deleted rows never match again, and new keys are not expired: each chunk takes the next ones.
        const deleted = Number(result.numDeletedRows);
        return { seen: deleted, changed: deleted };
      });
    },
  };

  const outbox = createOutbox(db, dialect, q);

  const intake: IntakeStore = {
    async lookup(query, tx) {
      if (postgres) return lookupOnPostgres(query, tx);
      const [keys, recent, taken] = await Promise.all([
        idempotency.findMany(query.keys, tx),
        inquiries.findRecentByFingerprints(query.fingerprints, query.since, tx),
        inquiries.takenReferences(query.references, tx),
      ]);
      return { keys, recent, taken };
    },
    async write({ inquiries: items, channels, keys, now }, tx) {
      const references = items.map(({ inquiry }) => inquiry.reference);
      if (!postgres) {
        const [inserted] = await Promise.all([
          inquiries.insertMany(items, tx),
          outbox.enqueue(references, channels, now, tx),
          idempotency.insertMany(keys, tx),
        ]);
        return inserted;
      }
      if (items.length === 0 && keys.length === 0) return new Set();
      const inserted = await onPostgres.writeIntake(q(tx), {
        inquiries: items.map(inquiryRow),
        deliveries: inquiryDeliveries(references, channels, now),
        keys: keys.map(idempotencyKeyRow),
      });
      return new Set(inserted);
    },
  };
  /** What to run after each open transaction commits, by transaction (while its work runs). */
  const onCommit = new WeakMap<object, (() => void)[]>();

  return {
    dialect,
    parallelWrites: dialect === 'postgres' ? POSTGRES_PARALLEL_WRITES : 1,
    auth: createAuthStore(db),
    inquiries,
    idempotency,
    intake,
    outbox,
    async transaction(work, options) {
      const callbacks: (() => void)[] = [];
      const result = await inTransaction(
        db,
        dialect,
        async (trx) => {
          onCommit.set(trx, callbacks);
          try {
            return await work(trx as unknown as Tx);
          } finally {
            onCommit.delete(trx);
          }
        },
        options,
      );
      for (const callback of callbacks) callback();
      return result;
    },
    afterCommit(tx, callback) {
      const callbacks = onCommit.get(tx);
      if (callbacks === undefined) throw new Error('afterCommit takes a transaction of store.transaction, while it is open');
      callbacks.push(callback);
    },
    ping,
    close: () => db.destroy(),
  };
}

function inquiryRow({ inquiry, fingerprint }: NewInquiry): InquiriesTable {
  return {
    reference: inquiry.reference,
    first_name: inquiry.firstName,
    last_name: inquiry.lastName,
    email: inquiry.email,
    company: inquiry.company,
    message: inquiry.message,
    client_id: inquiry.clientId,
    fingerprint,
    received_at: inquiry.receivedAt.getTime(),
  };
}

function idempotencyKeyRow(entry: IdempotencyEntry): IdempotencyKeysTable {
  return {
    key: entry.key,
    request_hash: entry.requestHash,
    reference: entry.reference,
    created_at: entry.createdAt.getTime(),
    outcome: entry.outcome,
  };
}

function toIdempotencyEntry(row: IdempotencyKeysTable): IdempotencyEntry {
  return {
    key: row.key,
    requestHash: row.request_hash,
    reference: row.reference,
    createdAt: new Date(Number(row.created_at)),
    // A key stored before migration 009 kept no outcome: most first requests created their inquiry.
    outcome: row.outcome === 'duplicate' ? 'duplicate' : 'created',
  };
}

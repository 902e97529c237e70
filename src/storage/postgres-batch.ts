// The statements of an intake batch on PostgreSQL, each with one text whatever the batch's size: a
// list is one array parameter (`= any($1)`), rows to insert one array per column, unnested. Reads are
// one statement and writes another (lookupIntake, writeIntake); SQLite keeps the builder's IN lists.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database, DeliveriesTable, IdempotencyKeysTable, NewInquiryRow } from './schema.js';

type Db = Kysely<Database>;

/** One column of `rows`, as an array parameter. */
function column<Row, K extends keyof Row>(rows: readonly Row[], key: K): Row[K][] {
  return rows.map((row) => row[key]);
}

type NewDelivery = Pick<DeliveriesTable, 'id' | 'reference' | 'channel' | 'status' | 'run_at' | 'queued_at'>;

/** Inserts the inquiries whose reference is free, returning the references inserted. */
function inquiriesInsert(rows: readonly NewInquiryRow[]): RawBuilder<Pick<NewInquiryRow, 'reference'>> {
  const of = <K extends keyof NewInquiryRow>(key: K) => column(rows, key);
  return sql`insert into inquiries
      (reference, first_name, last_name, email, company, message, client_id, fingerprint, received_at, verdict, spam_score, spam_reasons,
       body_hash, source)
    select * from unnest(${of('reference')}::text[], ${of('first_name')}::text[], ${of('last_name')}::text[],
      ${of('email')}::text[], ${of('company')}::text[], ${of('message')}::text[], ${of('client_id')}::text[],
      ${of('fingerprint')}::text[], ${of('received_at')}::bigint[], ${of('verdict')}::text[], ${of('spam_score')}::float8[],
      ${of('spam_reasons')}::text[], ${of('body_hash')}::text[], ${of('source')}::text[])
    on conflict (reference) do nothing
    returning reference`;
}

/** Inserts new deliveries of inquiries (the columns left out are null, or their default). */
function deliveriesInsert(rows: readonly NewDelivery[]): RawBuilder<unknown> {
  const of = <K extends keyof NewDelivery>(key: K) => column(rows, key);
  return sql`insert into deliveries (id, reference, channel, status, run_at, queued_at)
    select * from unnest(${of('id')}::text[], ${of('reference')}::text[], ${of('channel')}::text[], ${of('status')}::text[],
      ${of('run_at')}::bigint[], ${of('queued_at')}::bigint[])`;
}

function keysInsert(rows: readonly IdempotencyKeysTable[]): RawBuilder<unknown> {
  const of = <K extends keyof IdempotencyKeysTable>(key: K) => column(rows, key);
  return sql`insert into idempotency_keys (key, request_hash, reference, created_at, outcome)
    select * from unnest(${of('key')}::text[], ${of('request_hash')}::text[], ${of('reference')}::text[],
      ${of('created_at')}::bigint[], ${of('outcome')}::text[])`;
}

/** Inserts the inquiries whose reference is free; returns the references inserted. */
export async function insertInquiries(db: Db, rows: readonly NewInquiryRow[]): Promise<string[]> {
  const { rows: inserted } = await inquiriesInsert(rows).execute(db);
  return inserted.map((row) => row.reference);
}

export async function insertDeliveries(db: Db, rows: readonly NewDelivery[]): Promise<void> {
  await deliveriesInsert(rows).execute(db);
}

export async function insertIdempotencyKeys(db: Db, rows: readonly IdempotencyKeysTable[]): Promise<void> {
  await keysInsert(rows).execute(db);
}

/**
 * One row of lookupIntake: an idempotency key, the earliest recent inquiry of a fingerprint, a taken
 * reference, or a sender (in `reference`) of a body hash (in `key`).
 */
export type IntakeLookupRow =
  | ({ kind: 'key' } & IdempotencyKeysTable)
  | { kind: 'recent'; key: string; request_hash: null; reference: string; created_at: number; outcome: null }
  | { kind: 'taken' | 'sender'; key: string; request_hash: null; reference: string; created_at: null; outcome: null };

export interface IntakeLookup {
  keys: readonly string[];
  fingerprints: readonly string[];
  since: number;
  references: readonly string[];
  bodyHashes: readonly string[];
  sendersSince: number;
  sendersLimit: number;
}

/**
 * What deciding an intake batch needs to know, in one statement: the stored idempotency keys among
 * `keys`; for each of `fingerprints`, the earliest inquiry received at or after `since` that has it
 * (of equal times, the first reference); which of `references` are taken; and up to `sendersLimit`
 * lower-cased senders of each of `bodyHashes` since `sendersSince`.
 */
export async function lookupIntake(
  db: Db,
  { keys, fingerprints, since, references, bodyHashes, sendersSince, sendersLimit }: IntakeLookup,
): Promise<IntakeLookupRow[]> {
  const { rows } = await sql<IntakeLookupRow>`select 'key' as kind, key, request_hash, reference, created_at, outcome
      from idempotency_keys where key = any(${keys}::text[])
    union all (select distinct on (fingerprint) 'recent', fingerprint, null, reference, received_at, null from inquiries
      where fingerprint = any(${fingerprints}::text[]) and received_at >= ${since}
      order by fingerprint, received_at, reference)
    union all select 'taken', reference, null, reference, null, null from inquiries
      where reference = any(${references}::text[])
    union all select 'sender', body_hash, null, sender, null, null from (
      select body_hash, sender, row_number() over (partition by body_hash order by sender) as n from (
        select distinct body_hash, lower(email) as sender from inquiries
        where body_hash = any(${bodyHashes}::text[]) and received_at >= ${sendersSince}) as distinct_senders) as numbered
      where n <= ${sendersLimit}`.execute(db);
  return rows;
}

/**
 * An intake batch's writes in one statement: the inquiries whose reference is free, the deliveries
 * and the idempotency keys; returns the references inserted. Where one was taken, the deliveries and
 * keys written for it belong to another inquiry: the caller must not commit.
 */
export async function writeIntake(
  db: Db,
  {
    inquiries,
    deliveries,
    keys,
  }: { inquiries: readonly NewInquiryRow[]; deliveries: readonly NewDelivery[]; keys: readonly IdempotencyKeysTable[] },
): Promise<string[]> {
  const { rows } = await sql<Pick<NewInquiryRow, 'reference'>>`with inserted as (${inquiriesInsert(inquiries)}),
      queued as (${deliveriesInsert(deliveries)}),
      keyed as (${keysInsert(keys)})
    select reference from inserted`.execute(db);
  return rows.map((row) => row.reference);
}

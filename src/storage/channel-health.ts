// Each channel's health: kept on its row of delivery_successes where attempts are recorded, and read
// with the counts of its backlog (Outbox.health; docs/delivery.md, "Health and alerts").
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ChannelHealthFacts } from './ports.js';
import type { Database, DeliverySuccessesTable } from './schema.js';

/** A recorded attempt, as the channel's health counts it. */
export interface RecordedAttempt {
  readonly channel: string;
  readonly succeeded: boolean;
  readonly at: number;
  readonly error: string | null;
}

/** One channel's attempts of a batch, summed up as its row would be if they were all it ever had. */
export function summarise(channel: string, attempts: readonly RecordedAttempt[]): DeliverySuccessesTable {
  let lastSuccess: number | null = null;
  let lastFailure: RecordedAttempt | null = null;
  for (const attempt of attempts) {
    if (attempt.succeeded) lastSuccess = Math.max(lastSuccess ?? attempt.at, attempt.at);
    else if (lastFailure === null || attempt.at >= lastFailure.at) lastFailure = attempt;
  }
  const failingAfter = lastSuccess ?? Number.NEGATIVE_INFINITY;
  const failures = attempts.filter((attempt) => !attempt.succeeded && attempt.at > failingAfter).map((attempt) => attempt.at);
  return {
    channel,
    count: attempts.filter((attempt) => attempt.succeeded).length,
    last_success_at: lastSuccess,
    last_failure_at: lastFailure?.at ?? null,
    last_error: lastFailure?.error ?? null,
    failing_since: failures.length > 0 ? Math.min(...failures) : null,
  };
}

const stored = (column: string) => sql.ref(`delivery_successes.${column}`);
const incoming = (column: string) => sql.ref(`excluded.${column}`);

/** The later of the stored and the incoming time (either may be null). */
function later(column: string): RawBuilder<number | null> {
  const [old, now] = [stored(column), incoming(column)];
  return sql`case when ${now} is not null and (${old} is null or ${now} > ${old}) then ${now} else ${old} end`;
}

/**
 * Adds the batch's attempts to their channels' rows: successes counted, the later success and
 * failure kept, and failing_since the earliest failure after the last success, whichever
 * transaction recorded it. Rows taken in one order: two such transactions cannot deadlock.
 */
export async function recordChannelHealth(trx: Kysely<Database>, attempts: readonly RecordedAttempt[]): Promise<void> {
  const byChannel = new Map<string, RecordedAttempt[]>();
  for (const attempt of attempts) {
    const its = byChannel.get(attempt.channel);
    if (its) its.push(attempt);
    else byChannel.set(attempt.channel, [attempt]);
  }
  if (byChannel.size === 0) return;
  const rows = [...byChannel].sort(([a], [b]) => (a < b ? -1 : 1)).map(([channel, its]) => summarise(channel, its));
  const success = later('last_success_at');
  const failure = later('last_failure_at');
  const afterSuccess = (since: RawBuilder<unknown>) => sql`(${since} is not null and (${success} is null or ${since} > ${success}))`;
  const [old, now] = [stored('failing_since'), incoming('failing_since')];
  await trx
    .insertInto('delivery_successes')
    .values(rows)
    .onConflict((oc) =>
      oc.column('channel').doUpdateSet((eb) => ({
        count: eb('delivery_successes.count', '+', eb.ref('excluded.count')),
        last_success_at: success,
        last_failure_at: failure,
        last_error: sql`case when ${incoming('last_failure_at')} is not null and (${stored('last_failure_at')} is null or ${incoming('last_failure_at')} >= ${stored('last_failure_at')}) then ${incoming('last_error')} else ${stored('last_error')} end`,
        failing_since: sql`case
          when ${failure} is null or (${success} is not null and ${success} >= ${failure}) then null
          when ${afterSuccess(old)} and (not ${afterSuccess(now)} or ${old} <= ${now}) then ${old}
          when ${afterSuccess(now)} then ${now}
          else ${failure} end`,
      })),
    )
    .execute();
}

const time = (value: number | string | null) => (value === null ? null : new Date(Number(value)));

/** Outbox.health: the backlog's counts through the status index, and the channels' rows. */
export async function readChannelHealth(db: Kysely<Database>): Promise<ChannelHealthFacts[]> {
  const backlog = await db
    .selectFrom('deliveries')
    .select([
      'channel',
      sql<number>`sum(case when status = 'pending' and attempts = 0 then 1 else 0 end)`.as('waiting'),
      sql<number>`sum(case when status = 'pending' and attempts > 0 then 1 else 0 end)`.as('retrying'),
      sql<number>`sum(case when status = 'dead' then 1 else 0 end)`.as('dead'),
      sql<number>`sum(case when status = 'failed' then 1 else 0 end)`.as('failed'),
      sql<number | null>`max(case when status = 'dead' then finished_at end)`.as('last_given_up_at'),
    ])
    .where('status', 'in', ['pending', 'failed', 'dead'])
    .groupBy('channel')
    .execute();
  const rows = await db.selectFrom('delivery_successes').selectAll().execute();
  const channels = [...new Set([...backlog.map((row) => row.channel), ...rows.map((row) => row.channel)])].sort();
  return channels.map((channel) => {
    const counts = backlog.find((row) => row.channel === channel);
    const row = rows.find((candidate) => candidate.channel === channel);
    const lastFailureAt = time(row?.last_failure_at ?? null);
    return {
      channel,
      waiting: Number(counts?.waiting ?? 0),
      retrying: Number(counts?.retrying ?? 0),
      dead: Number(counts?.dead ?? 0),
      failed: Number(counts?.failed ?? 0),
      lastGivenUpAt: time(counts?.last_given_up_at ?? null),
      lastSuccessAt: time(row?.last_success_at ?? null),
      lastFailure: lastFailureAt === null ? null : { at: lastFailureAt, error: row?.last_error ?? '' },
      failingSince: time(row?.failing_since ?? null),
    };
  });
}

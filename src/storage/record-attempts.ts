// Recording delivery attempts: fenced by the lease and the attempt count, successes written
// together, each attempt counted in its channel's health (and successes for /metrics) in the same
// transaction.
import type { Kysely } from 'kysely';
import { type RecordedAttempt, recordChannelHealth } from './channel-health.js';
import { heldBy } from './leases.js';
import type { AttemptRecord } from './ports.js';
import type { Database } from './schema.js';

/** Keeps attempt errors readable in the CLI and bounded in the database. */
const ERROR_TEXT_MAX_LENGTH = 1_000;

/**
 * An error as stored: bounded, NUL replaced with U+FFFD. The text comes from the other side, and
 * PostgreSQL refuses NUL in text: the attempt could never be recorded, and the delivery stay in flight.
 */
function errorText(error: string): string {
  return error.slice(0, ERROR_TEXT_MAX_LENGTH).replaceAll('\u0000', '\ufffd');
}

/**
 * Outbox.recordAttempts in `trx`: successes, nearly all of them, go together per owner and attempt
 * count (in practice one group: one worker records its own); other outcomes one by one.
 */
export async function recordAttempts(trx: Kysely<Database>, records: readonly AttemptRecord[]): Promise<boolean[]> {
  const groups = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    const key = record.result.outcome === 'succeeded' ? `${record.attempts} ${record.owner}` : record.deliveryId;
    const group = groups.get(key);
    if (group) group.push(record);
    else groups.set(key, [record]);
  }
  const written = new Set<string>();
  const recorded: RecordedAttempt[] = [];
  for (const group of groups.values()) {
    const channels = await recordTogether(trx, group);
    for (const { deliveryId, attempt, result } of group) {
      const channel = channels.get(deliveryId);
      if (channel === undefined) continue;
      written.add(deliveryId);
      const error = result.outcome === 'succeeded' ? null : errorText(result.error);
      // When the attempt ended, as finished_at: a delivery given up compares with a success alike.
      recorded.push({ channel, succeeded: error === null, at: Math.round(attempt.attemptedAt.getTime() + attempt.durationMs), error });
    }
  }
  await recordChannelHealth(trx, recorded);
  return records.map((record) => written.has(record.deliveryId));
}

/**
 * Records attempts sharing owner, claimed attempt count and outcome in at most three statements;
 * returns the deliveries written (those still held: heldBy) with their channels. They share one
 * finished_at, when the last send ended; each attempt row keeps its own time and duration.
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

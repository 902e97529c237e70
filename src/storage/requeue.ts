// Re-queueing failed and dead deliveries (the CLI's requeue), in chunks beside the running service.
import type { Kysely } from 'kysely';
import { ACROSS_PROCESSES, inChunks } from './bulk.js';
import type { Dialect } from './ports.js';
import type { Database } from './schema.js';

/** Outbox.requeue: all inquiry deliveries that failed or died, or one inquiry's; returns how many. */
export async function requeue(db: Kysely<Database>, dialect: Dialect, now: Date, reference?: string): Promise<number> {
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
      // A fresh retry window, tried at once. Its attempts stay counted (they number its records and
      // fence them), so later waits keep their spacing.
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
}

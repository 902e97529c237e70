// One delivery attempt: wait for a send slot of the channel, check the lease is still held, send,
// then record the outcome (a retry scheduled, or dead past the retry window) and log it.
import type { Logger } from 'pino';
import { maskEmailAddresses } from '../privacy.js';
import type { AttemptOutcome, DeliveryRecord, DueDelivery } from '../storage/ports.js';
import { nextAttemptAt, type RetryPolicy } from './backoff.js';
import type { Channel, SendResult } from './channel.js';
import type { RecordAttempt } from './recorder.js';
import type { Slots } from './slots.js';

export interface AttemptOptions {
  readonly channels: ReadonlyMap<string, Channel>;
  /** The sends a channel may run at once (ChannelSlots.sendSlots). */
  readonly sendSlots: (channel: string) => Slots | undefined;
  readonly isRunning: () => boolean;
  /** Whether this worker's lease on the delivery leaves time to send (HeldLeases.stillHeld). */
  readonly stillHeld: (id: string) => boolean;
  /** Gives a claimed delivery back unused, still due (Outbox.releaseClaims). */
  readonly giveBack: (id: string) => Promise<void>;
  readonly record: RecordAttempt;
  readonly retry: RetryPolicy;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Called after each successful delivery with the seconds since it was queued (metrics). */
  readonly onDelivered?: (channel: string, seconds: number) => void;
}

/** What an attempt's result means for the delivery: a retry is scheduled, or dead past the window. */
export function outcomeOf(delivery: DeliveryRecord, result: SendResult, now: Date, retry: RetryPolicy): AttemptOutcome {
  if (result.outcome !== 'retry') return result;
  const runAt = nextAttemptAt(delivery.queuedAt, now, delivery.attempts + 1, retry, undefined, result.retryAfterMs);
  return runAt === null ? { outcome: 'dead', error: result.error } : { outcome: 'retry', error: result.error, runAt };
}

/** Makes attempts; each settles once its outcome is recorded, or left to the lease. */
export function createAttempts(options: AttemptOptions): (item: DueDelivery) => Promise<void> {
  const { channels, isRunning, now } = options;

  /** The send's result, or null when it must not start: the lease may be another worker's by now. */
  async function sendWhileHeld({ delivery, payload }: DueDelivery, slots: Slots | undefined, log: Logger): Promise<SendResult | null> {
    const channel = channels.get(delivery.channel);
    if (!channel) return { outcome: 'retry', error: `channel "${delivery.channel}" is not configured in this process` };
    try {
      if (!options.stillHeld(delivery.id)) {
        log.warn('the lease ran out before the send could start; left to the worker that holds it now');
        return null;
      }
      // A server's error may quote an address (SMTP's "550 <a@b.example> unknown"): stored and logged masked.
      const result = await channel.send(delivery, payload);
      return result.outcome === 'succeeded' ? result : { ...result, error: maskEmailAddresses(result.error) };
    } catch (error) {
      return { outcome: 'retry', error: maskEmailAddresses(error instanceof Error ? error.message : String(error)) };
    } finally {
      slots?.give();
    }
  }

  async function recordOutcome({ delivery, payload }: DueDelivery, result: SendResult, attemptedAt: Date, durationMs: number, log: Logger) {
    const failures = delivery.attempts + 1;
    const outcome = outcomeOf(delivery, result, now(), options.retry);
    // The attempt that spends the retry window is recorded as `dead`, as the delivery is.
    const attempt = { attemptedAt, outcome: outcome.outcome, error: outcome.outcome === 'succeeded' ? null : outcome.error, durationMs };
    let recorded: boolean;
    try {
      recorded = await options.record(delivery, attempt, outcome);
    } catch (error) {
      // Stopped before the attempt could be recorded: the lease expires and the delivery is tried again.
      log.error({ err: error }, 'could not record a delivery attempt before stopping; it is tried again after its lease');
      return;
    }
    if (!recorded) {
      // Another worker took it over after the lease ran out (its outcome stands), or this outcome was
      // already written by a commit whose answer was lost on the way.
      log.warn(
        { attempt: failures, outcome: outcome.outcome },
        'the delivery is no longer held under this lease; outcome not recorded again',
      );
      return;
    }
    switch (outcome.outcome) {
      case 'succeeded':
        log.info({ attempt: failures, durationMs: Math.round(durationMs) }, `${payload.kind} delivered`);
        options.onDelivered?.(delivery.channel, (now().getTime() - delivery.queuedAt.getTime()) / 1000);
        break;
      case 'failed':
        log.error({ attempt: failures, error: outcome.error }, 'delivery failed permanently; re-queue it with the CLI once fixed');
        break;
      case 'dead':
        log.error({ attempt: failures, error: outcome.error }, 'delivery given up after the retry window; re-queue it with the CLI');
        break;
      case 'retry':
        log.warn({ attempt: failures, error: outcome.error, retryAt: outcome.runAt.toISOString() }, 'delivery attempt failed; will retry');
    }
  }

  return async (item) => {
    const { delivery } = item;
    const log = options.logger.child({ reference: delivery.reference, channel: delivery.channel, deliveryId: delivery.id });
    // A send that waits for a free connection of its channel is timed from when it starts.
    const slots = options.sendSlots(delivery.channel);
    const slot = (await slots?.take()) ?? true;
    if (!slot || !isRunning()) {
      // Stopping: no send starts any more. Given back unused, still due.
      if (slot) slots?.give();
      await options.giveBack(delivery.id).catch(() => {
        // left to its lease: it is claimed again once that runs out
      });
      return;
    }
    const attemptedAt = now();
    const started = performance.now();
    const result = await sendWhileHeld(item, slots, log);
    if (result === null) return;
    await recordOutcome(item, result, attemptedAt, performance.now() - started, log);
  };
}

// A delivery channel sends one inquiry (or service message) and says what became of the attempt.
import type { DeliveryRecord, Outgoing } from '../storage/ports.js';

export type SendResult =
  | { readonly outcome: 'succeeded' }
  /** Worth trying again later (network error, 5xx, 408, 429, SMTP 4xx). */
  | {
      readonly outcome: 'retry';
      readonly error: string;
      /** The receiver's own wait (a webhook's Retry-After): the next attempt is no sooner than this. */
      readonly retryAfterMs?: number;
    }
  /** Trying again cannot help (the receiver refused the message for good). */
  | { readonly outcome: 'failed'; readonly error: string };

export interface Channel {
  readonly name: string;
  /**
   * Sends it can run at once (the email channel's pooled SMTP connections), or none said: any
   * number. Beyond it, sends wait in the worker, which checks its lease right before each starts.
   */
  readonly concurrency?: number;
  send(delivery: DeliveryRecord, payload: Outgoing): Promise<SendResult>;
  close?(): Promise<void> | void;
}

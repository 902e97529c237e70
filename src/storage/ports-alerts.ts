// The storage port of the delivery alerts (ports.ts re-exports it): each channel's last alert, shared
// by every instance so that one alert goes out per outage and hour (docs/delivery.md). Types only.
import type { Tx } from './ports-tx.js';

export interface DeliveryAlertState {
  readonly channel: string;
  /** `alerting`: an alert went out and its recovery not yet; `recovered`: the recovery went out too. */
  readonly state: 'alerting' | 'recovered';
  /** When the last alert (not recovery) was queued: the next waits an hour from it. */
  readonly alertedAt: Date;
}

export interface DeliveryAlertStore {
  /** The channel's state, read in `tx` (whose caller holds the channel's lock). */
  find(channel: string, tx: Tx): Promise<DeliveryAlertState | undefined>;
  /** Writes the channel's state in `tx`. */
  save(state: DeliveryAlertState, tx: Tx): Promise<void>;
}

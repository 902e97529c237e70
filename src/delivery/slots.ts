// Channel slots: how many deliveries of each channel this worker has in flight (claims are made per
// channel, so a channel whose receiver hangs holds only its own places), and the sends each channel
// may run at once (Channel.concurrency), the others waiting in line.
import type { Channel } from './channel.js';

/** A channel open for a claim, and how many of its places are free. */
export interface OpenChannel {
  readonly name: string;
  readonly free: number;
}

/** A count of free places, and the callers waiting for one, in order. */
export class Slots {
  private readonly waiting: ((taken: boolean) => void)[] = [];
  constructor(private free: number) {}

  /** True once a place is this caller's; false if the wait was abandoned (abandonWaiting). */
  async take(): Promise<boolean> {
    if (this.free > 0) {
      this.free--;
      return true;
    }
    return new Promise<boolean>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free++;
  }

  /** Every caller waiting now gets no place. */
  abandonWaiting(): void {
    for (const next of this.waiting.splice(0)) next(false);
  }
}

export class ChannelSlots {
  /** Deliveries of each channel in flight here. */
  private readonly occupied = new Map<string, number>();
  private readonly sends = new Map<string, Slots>();

  constructor(
    private readonly channels: ReadonlyMap<string, Channel>,
    /** Deliveries in flight at once, per channel. */
    private readonly concurrency: number,
  ) {}

  /** The channels with at least half their places free: claims come in chunks, each a committed write. */
  open(): OpenChannel[] {
    return [...this.channels.keys()].flatMap((name) => {
      const free = this.concurrency - (this.occupied.get(name) ?? 0);
      return free >= Math.ceil(this.concurrency / 2) ? [{ name, free }] : [];
    });
  }

  /** A delivery of `channel` is now in flight. */
  occupy(channel: string): void {
    this.occupied.set(channel, (this.occupied.get(channel) ?? 0) + 1);
  }

  /** A delivery of `channel` is no longer in flight. */
  vacate(channel: string): void {
    this.occupied.set(channel, (this.occupied.get(channel) ?? 1) - 1);
  }

  /** The sends `channel` may run at once, or undefined when it sets no limit (or is not configured). */
  sendSlots(channel: string): Slots | undefined {
    const concurrency = this.channels.get(channel)?.concurrency;
    if (concurrency === undefined) return undefined;
    let slots = this.sends.get(channel);
    if (slots === undefined) {
      slots = new Slots(concurrency);
      this.sends.set(channel, slots);
    }
    return slots;
  }

  /** Sends waiting for a place of their channel start no more: each gets `false`. */
  abandonWaiting(): void {
    for (const slots of this.sends.values()) slots.abandonWaiting();
  }
}

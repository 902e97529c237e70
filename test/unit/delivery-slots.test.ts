// Channel slots (src/delivery/slots.ts): places taken and given back in order, waits abandoned on
// stop, and the channels open for a claim once half their places are free.
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../src/delivery/channel.js';
import { ChannelSlots, Slots } from '../../src/delivery/slots.js';

const channel = (name: string, concurrency?: number): Channel => ({
  name,
  ...(concurrency !== undefined && { concurrency }),
  send: async () => ({ outcome: 'succeeded' }),
});

/** Lets every promise that can settle now settle. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const byName = (...channels: Channel[]) => new Map(channels.map((c) => [c.name, c]));

describe('slots', () => {
  it('gives each caller a place while any is free, then makes them wait', async () => {
    const slots = new Slots(2);
    expect(await slots.take()).toBe(true);
    expect(await slots.take()).toBe(true);
    let third: boolean | undefined;
    const taking = slots.take().then((taken) => {
      third = taken;
    });
    await settled();
    expect(third).toBeUndefined();
    slots.give();
    await taking;
    expect(third).toBe(true);
  });

  it('hands a place given back to the callers waiting, in the order they came', async () => {
    const slots = new Slots(1);
    await slots.take();
    const order: string[] = [];
    const first = slots.take().then(() => order.push('first'));
    const second = slots.take().then(() => order.push('second'));
    slots.give();
    await first;
    slots.give();
    await second;
    expect(order).toEqual(['first', 'second']);
  });

  it('answers every caller waiting with no place when the waits are abandoned, and keeps the free count', async () => {
    const slots = new Slots(1);
    await slots.take();
    const waiting = [slots.take(), slots.take()];
    slots.abandonWaiting();
    expect(await Promise.all(waiting)).toEqual([false, false]);
    slots.give(); // the place taken first comes back: free for the next caller
    expect(await slots.take()).toBe(true);
  });

  it('counts a place given back with nobody waiting as free', async () => {
    const slots = new Slots(0);
    slots.give();
    expect(await slots.take()).toBe(true);
  });
});

describe('channel slots', () => {
  it('opens every channel with all its places free, in the order the channels were given', () => {
    const slots = new ChannelSlots(byName(channel('email'), channel('webhook')), 4);
    expect(slots.open()).toEqual([
      { name: 'email', free: 4 },
      { name: 'webhook', free: 4 },
    ]);
  });

  it('keeps a channel closed until at least half its places are free again: claims come in chunks', () => {
    const slots = new ChannelSlots(byName(channel('email'), channel('webhook')), 4);
    for (let i = 0; i < 3; i++) slots.occupy('email');
    expect(slots.open()).toEqual([{ name: 'webhook', free: 4 }]);
    slots.vacate('email');
    expect(slots.open()).toEqual([
      { name: 'email', free: 2 },
      { name: 'webhook', free: 4 },
    ]);
  });

  it('rounds half an odd concurrency up', () => {
    const slots = new ChannelSlots(byName(channel('email')), 3);
    slots.occupy('email');
    expect(slots.open()).toEqual([{ name: 'email', free: 2 }]);
    slots.occupy('email');
    expect(slots.open()).toEqual([]);
  });

  it("counts one channel's deliveries apart from another's: a hanging channel holds only its own places", () => {
    const slots = new ChannelSlots(byName(channel('email'), channel('webhook')), 2);
    slots.occupy('email');
    slots.occupy('email');
    expect(slots.open()).toEqual([{ name: 'webhook', free: 2 }]);
  });

  it("limits a channel's sends to its concurrency, with one set of slots per channel", async () => {
    const slots = new ChannelSlots(byName(channel('email', 1), channel('webhook')), 32);
    const sends = slots.sendSlots('email');
    expect(sends).toBeInstanceOf(Slots);
    expect(slots.sendSlots('email')).toBe(sends);
    expect(await sends?.take()).toBe(true);
    let second: boolean | undefined;
    void sends?.take().then((taken) => {
      second = taken;
    });
    await settled();
    expect(second).toBeUndefined();
  });

  it('sets no limit on a channel without a concurrency, nor on one not configured', () => {
    const slots = new ChannelSlots(byName(channel('webhook')), 32);
    expect(slots.sendSlots('webhook')).toBeUndefined();
    expect(slots.sendSlots('sms')).toBeUndefined();
  });

  it('abandons the waiting sends of every channel', async () => {
    const slots = new ChannelSlots(byName(channel('email', 1), channel('fax', 1)), 32);
    const waits = ['email', 'fax'].map(async (name) => {
      const sends = slots.sendSlots(name);
      await sends?.take();
      return sends?.take();
    });
    await settled();
    slots.abandonWaiting();
    expect(await Promise.all(waits)).toEqual([false, false]);
  });
});

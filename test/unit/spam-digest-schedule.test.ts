// The daily digest's schedule against a real store, with the clock as the test sets it: one digest per
// UTC day from SPAM_DIGEST_HOUR, only when something went to the quarantine, taken by one instance of
// several, and a database that fails is said once and tried again.
import { describe, expect, it } from 'vitest';
import { digestPeriod } from '../../src/spam/digest.js';
import { createDigestSchedule, type DigestScheduleOptions } from '../../src/spam/digest-schedule.js';
import type { Store } from '../../src/storage/ports.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { inquiry } from '../helpers/store-fixtures.js';

describe('digestPeriod', () => {
  it('is the UTC day of the latest digest hour at or before the time', () => {
    expect(digestPeriod(new Date('2026-11-23T07:59:59.999Z'), 8)).toBe('2026-11-22');
    expect(digestPeriod(new Date('2026-11-23T08:00:00.000Z'), 8)).toBe('2026-11-23');
    expect(digestPeriod(new Date('2026-11-23T23:59:59.999Z'), 8)).toBe('2026-11-23');
    expect(digestPeriod(new Date('2026-11-23T00:00:00.000Z'), 0)).toBe('2026-11-23');
    expect(digestPeriod(new Date('2026-11-23T22:59:59.000Z'), 23)).toBe('2026-11-22');
    expect(digestPeriod(new Date('2027-01-01T05:00:00.000Z'), 8)).toBe('2026-12-31');
  });
});

interface Logged {
  readonly level: string;
  readonly fields: unknown;
  readonly message: string | undefined;
}

function recordingLogger(lines: Logged[]): DigestScheduleOptions['logger'] {
  const at =
    (level: string) =>
    (fields: unknown, message?: string): void =>
      void lines.push({ level, fields, message: typeof fields === 'string' ? fields : message });
  return { info: at('info'), warn: at('warn'), debug: at('debug') } as unknown as DigestScheduleOptions['logger'];
}

describe.each(BACKENDS)('the digest schedule on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  async function quarantine(store: Store, reference: string, receivedAt: Date) {
    const judgement = { verdict: 'spam' as const, score: 6, reasons: [{ code: 'spam_phrases', detail: 'backlinks' }] };
    await store.inquiries.insertMany([{ inquiry: inquiry(reference, receivedAt), fingerprint: reference, judgement }]);
  }

  const pendingDigests = async (store: Store) =>
    (await store.outbox.countByChannelAndStatus()).filter((row) => row.status === 'pending').reduce((sum, row) => sum + row.count, 0);

  it('queues one digest a day from its hour, only when something went to the quarantine, by one of several instances', async () => {
    const { store } = await stores.open();
    let clock = new Date('2026-11-23T08:00:30Z');
    const queued: string[][] = [];
    const lines: Logged[] = [];
    const schedule = (hourUtc: number | null = 8) =>
      createDigestSchedule({
        store,
        route: { channel: 'email', to: 'studio@example.com' },
        hourUtc,
        logger: recordingLogger(lines),
        now: () => clock,
        onQueued: (outcome) => queued.push([...outcome.listed]),
      });
    const [first, second] = [schedule(), schedule()];

    // Nothing quarantined: the day's digest is taken, empty, and nothing is queued.
    await first.check();
    expect(await pendingDigests(store)).toBe(0);

    // Something arrives after the hour: it waits for the next day's digest, whichever instance looks.
    await quarantine(store, 'INQ-SPAM01', new Date('2026-11-23T09:00:00Z'));
    clock = new Date('2026-11-24T07:59:59Z');
    await Promise.all([first.check(), second.check()]);
    expect(queued).toEqual([]);

    clock = new Date('2026-11-24T08:00:00Z');
    await Promise.all([first.check(), second.check(), first.check()]);
    expect(queued).toEqual([['INQ-SPAM01']]);
    expect(await pendingDigests(store)).toBe(1);
    clock = new Date('2026-11-24T20:00:00Z');
    await Promise.all([first.check(), second.check()]);
    expect(queued).toHaveLength(1);

    // The log says what was queued without a name or an address.
    const said = lines.filter((line) => line.message === 'quarantine digest queued');
    expect(said).toHaveLength(1);
    expect(said[0]?.fields).toEqual({ digest: expect.any(String), period: '2026-11-24', channel: 'email', inquiries: 1 });
    expect(JSON.stringify(lines)).not.toMatch(/Ada|Lovelace|ada@example\.com/);

    // Off, or with nowhere to send it, it never looks.
    await quarantine(store, 'INQ-SPAM02', new Date('2026-11-24T21:00:00Z'));
    clock = new Date('2026-11-25T09:00:00Z');
    await schedule(null).check();
    await createDigestSchedule({ store, route: null, hourUtc: 8, logger: recordingLogger(lines), now: () => clock }).check();
    expect(await pendingDigests(store)).toBe(1);
    await second.check();
    expect(queued).toEqual([['INQ-SPAM01'], ['INQ-SPAM02']]);
  });

  it('says once that the database fails, tries again at the next look, and says when it works again', async () => {
    const { store } = await stores.open();
    await quarantine(store, 'INQ-SPAM01', new Date('2026-11-23T07:00:00Z'));
    let failures = 2;
    const failingFirst: Pick<Store, 'transaction' | 'digests' | 'outbox'> = {
      transaction: (work, options) => store.transaction(work, options),
      outbox: store.outbox,
      digests: {
        take: (digest, tx) => (failures-- > 0 ? Promise.reject(new Error('connection terminated')) : store.digests.take(digest, tx)),
      },
    };
    const lines: Logged[] = [];
    const queued: number[] = [];
    const schedule = createDigestSchedule({
      store: failingFirst,
      route: { channel: 'webhook' },
      hourUtc: 8,
      logger: recordingLogger(lines),
      now: () => new Date('2026-11-23T08:01:00Z'),
      onQueued: (outcome) => queued.push(outcome.total),
    });
    await schedule.check();
    await schedule.check();
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      'could not take the quarantine digest; will try again every minute',
    ]);
    expect(queued).toEqual([]);
    await schedule.check();
    expect(queued).toEqual([1]);
    expect(lines.map((line) => line.message)).toContain('the quarantine digest can be taken again');
  });

  it('looks at start and then every interval, and stops looking when stopped', async () => {
    const { store } = await stores.open();
    let clock = new Date('2026-11-23T08:00:00Z');
    const queued: number[] = [];
    const schedule = createDigestSchedule({
      store,
      route: { channel: 'email', to: 'studio@example.com' },
      hourUtc: 8,
      logger: recordingLogger([]),
      now: () => clock,
      checkIntervalMs: 20,
      onQueued: (outcome) => queued.push(outcome.total),
    });
    await quarantine(store, 'INQ-SPAM01', new Date('2026-11-23T07:00:00Z'));
    schedule.start();
    await expect.poll(() => queued, { timeout: 5_000 }).toEqual([1]);
    await quarantine(store, 'INQ-SPAM02', new Date('2026-11-23T09:00:00Z'));
    clock = new Date('2026-11-24T08:00:00Z');
    await expect.poll(() => queued, { timeout: 5_000 }).toEqual([1, 1]);
    await schedule.stop();
    await quarantine(store, 'INQ-SPAM03', new Date('2026-11-24T09:00:00Z'));
    clock = new Date('2026-11-25T08:00:00Z');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(queued).toEqual([1, 1]);
  });
});

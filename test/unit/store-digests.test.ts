// The quarantine digest's store, on each backend: a digest takes what went to the quarantine since
// the last one (an inquiry moved there later too, one released meanwhile not), once per period
// however many instances try at once, and lists the lowest scores first.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DigestContents, InquiryJudgement, Store } from '../../src/storage/ports.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { inquiry } from '../helpers/store-fixtures.js';

const spam = (score: number): InquiryJudgement => ({ verdict: 'spam', score, reasons: [{ code: 'spam_phrases', detail: 'backlinks' }] });

async function store(target: Store, reference: string, judgement: InquiryJudgement, receivedAt = new Date('2026-11-22T10:00:00Z')) {
  await target.inquiries.insertMany([{ inquiry: inquiry(reference, receivedAt), fingerprint: reference, judgement }]);
}

function take(
  target: Store,
  {
    id,
    period = null,
    at = new Date('2026-11-23T08:00:00Z'),
    limit = 100,
  }: { id: string; period?: string | null; at?: Date; limit?: number },
) {
  return target.transaction((tx) => target.digests.take({ id, period, at, limit }, tx));
}

const references = (contents: DigestContents | null) => contents?.listed.map((entry) => entry.inquiry.reference);

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('takes what went to the quarantine since the last digest, once, and not the inbox', async () => {
    const { store: target, opened } = await stores.open();
    await store(target, 'INQ-SPAM01', spam(6));
    await store(target, 'INQ-INBOX1', { verdict: 'inbox', score: 1, reasons: [] });
    const first = await take(target, { id: 'd-1', period: '2026-11-23' });
    expect(first).toMatchObject({ since: null, total: 1 });
    expect(first?.listed).toEqual([
      {
        inquiry: inquiry('INQ-SPAM01', new Date('2026-11-22T10:00:00Z')),
        judgement: spam(6),
        quarantinedAt: new Date('2026-11-22T10:00:00Z'),
      },
    ]);
    // The period is taken; the next digest finds nothing new, and says since when.
    expect(await take(target, { id: 'd-2', period: '2026-11-23' })).toBeNull();
    expect(await take(target, { id: 'd-3', period: '2026-11-24', at: new Date('2026-11-24T08:00:00Z') })).toEqual({
      since: new Date('2026-11-23T08:00:00Z'),
      total: 0,
      listed: [],
    });
    // Each digest is recorded with what it took; the refused one is not.
    const recorded = await sql<{
      id: string;
      period: string;
      total: number;
    }>`select id, period, total from quarantine_digests order by id`.execute(opened.db);
    expect(recorded.rows.map((row) => ({ ...row, total: Number(row.total) }))).toEqual([
      { id: 'd-1', period: '2026-11-23', total: 1 },
      { id: 'd-3', period: '2026-11-24', total: 0 },
    ]);
  });

  it('takes an inquiry moved to the quarantine after its receipt, and again after a release and a new move; not one released meanwhile', async () => {
    const { store: target } = await stores.open();
    await store(target, 'INQ-MOVED1', { verdict: 'inbox', score: 0, reasons: [] });
    await store(target, 'INQ-FREED1', spam(5));
    const movedAt = new Date('2026-11-23T07:30:00Z');
    expect(await target.inquiries.setVerdict('INQ-MOVED1', 'spam', [], movedAt)).toBe(true);
    expect(await target.inquiries.setVerdict('INQ-FREED1', 'inbox', [], movedAt)).toBe(true);
    const first = await take(target, { id: 'd-1' });
    expect(first).toMatchObject({ total: 1, listed: [{ inquiry: { reference: 'INQ-MOVED1' }, quarantinedAt: movedAt }] });

    // Released, then moved back: it is news again.
    await target.inquiries.setVerdict('INQ-MOVED1', 'inbox', [], new Date('2026-11-23T09:00:00Z'));
    expect((await take(target, { id: 'd-2' }))?.total).toBe(0);
    const again = new Date('2026-11-23T10:00:00Z');
    await target.inquiries.setVerdict('INQ-MOVED1', 'spam', [], again);
    await target.inquiries.setVerdict('INQ-FREED1', 'spam', [], again);
    const third = await take(target, { id: 'd-3' });
    expect(references(third)).toEqual(['INQ-MOVED1', 'INQ-FREED1']); // score 0 before score 5
    expect(third?.listed.map((entry) => entry.quarantinedAt)).toEqual([again, again]);
  });

  it('lists up to the limit, lowest score first, then the earliest quarantined, and counts them all', async () => {
    const { store: target } = await stores.open();
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute));
    await store(target, 'INQ-HIGH01', spam(12), at(0));
    await store(target, 'INQ-LOW002', spam(4), at(2));
    await store(target, 'INQ-LOW001', spam(4), at(1));
    await store(target, 'INQ-MID001', spam(6), at(0));
    const contents = await take(target, { id: 'd-1', limit: 3 });
    expect(contents?.total).toBe(4);
    expect(references(contents)).toEqual(['INQ-LOW001', 'INQ-LOW002', 'INQ-MID001']);
    // The one left out of the list is taken too: the next digest does not list it.
    expect((await take(target, { id: 'd-2' }))?.total).toBe(0);
  });

  it('takes a period once however many take it at once; a digest asked for now beside them takes each inquiry once', async () => {
    const { store: target } = await stores.open();
    for (let i = 0; i < 20; i++) await store(target, `INQ-RACE${String(i).padStart(2, '0')}`, spam(5));
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => take(target, { id: `s-${i}`, period: '2026-11-23' })),
      take(target, { id: 'now-1' }),
      take(target, { id: 'now-2' }),
    ]);
    expect(results.slice(0, 6).filter((result) => result !== null)).toHaveLength(1);
    const taken = results.filter((result) => result !== null).flatMap((result) => references(result) ?? []);
    expect(taken.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `INQ-RACE${String(i).padStart(2, '0')}`));
  });
});

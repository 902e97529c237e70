// Inquiries, idempotency keys and intake batches on each backend: inserts, lookups by reference,
// fingerprint and key, listing page after page.
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import type { InquiryRecord, IntakeWrites, Store } from '../../src/storage/ports.js';
import { BACKENDS, type FreshDatabase, storePerTest } from '../helpers/databases.js';
import { inquiry } from '../helpers/store-fixtures.js';

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;
  let database: FreshDatabase;
  async function openTempStore(): Promise<Store> {
    ({ store, database } = await stores.open());
    return store;
  }

  describe('inquiries', () => {
    it('refuse a second inquiry with a taken reference, inserting the others', async () => {
      await openTempStore();
      const one = (reference: string) => ({ inquiry: inquiry(reference), fingerprint: reference });
      expect(await store.inquiries.insertMany([one('INQ-BBBBBB')])).toEqual(new Set(['INQ-BBBBBB']));
      expect(await store.inquiries.insertMany([one('INQ-BBBBBB'), one('INQ-BBBBBC')])).toEqual(new Set(['INQ-BBBBBC']));
    });

    it('find a recent one by fingerprint, not an old one', async () => {
      await openTempStore();
      await store.inquiries.insertMany([
        { inquiry: inquiry('INQ-CCCCCC', new Date('2026-01-01T00:00:00Z')), fingerprint: 'same' },
        { inquiry: inquiry('INQ-CCCCCD', new Date('2026-01-01T00:00:05Z')), fingerprint: 'same' },
      ]);
      const at = (iso: string) => store.inquiries.findRecentByFingerprints(['same', 'other'], new Date(iso));
      expect(await at('2026-01-01T00:00:00Z')).toEqual(new Map([['same', 'INQ-CCCCCC']]));
      expect(await at('2026-01-01T00:00:01Z')).toEqual(new Map([['same', 'INQ-CCCCCD']]));
      expect(await at('2026-01-01T00:00:06Z')).toEqual(new Map());
    });

    it('find, of those received in the same millisecond, the one whose reference sorts first, whatever the order written', async () => {
      await openTempStore();
      const same = new Date('2026-01-01T00:00:00Z');
      await store.inquiries.insertMany([
        { inquiry: inquiry('INQ-TTTTTB', same), fingerprint: 'tie' },
        { inquiry: inquiry('INQ-TTTTTA', same), fingerprint: 'tie' },
        { inquiry: inquiry('INQ-TTTTTC', same), fingerprint: 'tie' },
      ]);
      await store.inquiries.insertMany([{ inquiry: inquiry('INQ-TTTTT0', new Date(same.getTime() + 1)), fingerprint: 'tie' }]);
      expect(await store.inquiries.findRecentByFingerprints(['tie'], same)).toEqual(new Map([['tie', 'INQ-TTTTTA']]));
    });

    it('keep any text as it was given, in a batch of any size, and find it again by reference, fingerprint and key', async () => {
      await openTempStore();
      // Quotes, backslashes, braces, commas and "NULL" are what an array literal has to escape.
      const text = fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }).map((value) => value.replaceAll('\u0000', '')),
        fc.constantFrom('"', '\\', '{}', '{"a","b"}', ',', 'NULL', 'null', ' ', "'; drop table inquiries; --"),
      );
      let serial = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ firstName: text, message: text, company: fc.option(text), clientId: fc.option(text) }), {
            minLength: 1,
            maxLength: 12,
          }),
          async (fields) => {
            const batch = fields.map(({ firstName, message, company, clientId }) => {
              const reference = `INQ-P${String(++serial).padStart(5, '0')}`;
              return { inquiry: { ...inquiry(reference), firstName, message, company, clientId }, fingerprint: `fp ${message} ${serial}` };
            });
            const references = batch.map(({ inquiry }) => inquiry.reference);
            expect(await store.inquiries.insertMany(batch)).toEqual(new Set(references));
            // Again, beside a new one: only the new one is inserted, and the first ones stay as they were.
            const another = { inquiry: inquiry(`INQ-P${String(++serial).padStart(5, '0')}`), fingerprint: `fp another ${serial}` };
            const again = batch.map(({ inquiry, fingerprint }) => ({ inquiry: { ...inquiry, message: 'overwritten?' }, fingerprint }));
            expect(await store.inquiries.insertMany([...again, another])).toEqual(new Set([another.inquiry.reference]));
            for (const { inquiry: stored } of batch) expect(await store.inquiries.findByReference(stored.reference)).toEqual(stored);
            expect(await store.inquiries.takenReferences([...references, 'INQ-ZZZZZZ'])).toEqual(new Set(references));
            const found = await store.inquiries.findRecentByFingerprints(
              batch.map(({ fingerprint }) => fingerprint),
              new Date(0),
            );
            expect(found).toEqual(new Map(batch.map(({ inquiry, fingerprint }) => [fingerprint, inquiry.reference])));
            const keys = batch.map(({ inquiry }, index) => ({
              key: `${inquiry.reference} ${inquiry.message}`,
              requestHash: inquiry.firstName,
              reference: inquiry.reference,
              createdAt: inquiry.receivedAt,
              outcome: index % 2 === 0 ? ('created' as const) : ('duplicate' as const),
            }));
            await store.idempotency.insertMany(keys);
            expect(await store.idempotency.findMany(keys.map(({ key }) => key))).toEqual(new Map(keys.map((key) => [key.key, key])));
            await store.outbox.enqueue(references, ['email', 'webhook'], new Date());
            expect((await store.outbox.forReferences(references)).length).toBe(2 * references.length);
          },
        ),
        { numRuns: 25 },
      );
    });

    it("find, for an intake batch, the stored keys, each fingerprint's earliest recent inquiry (of equal times the first reference), the taken references and each body's first senders", async () => {
      await openTempStore();
      let run = 0;
      const base = Date.parse('2026-01-01T00:00:00Z');
      // Few fingerprints and times, so that folds, ties and the window's edge all come up.
      const stored = fc.uniqueArray(
        fc.record({
          suffix: fc.stringMatching(/^[0-9A-Z]{4}$/),
          fingerprint: fc.integer({ min: 0, max: 3 }),
          at: fc.integer({ min: 0, max: 4 }),
          // A body hash or none (a short body), and one of a few senders, in either case.
          body: fc.option(fc.integer({ min: 0, max: 2 })),
          sender: fc.constantFrom('ann@x.example', 'ANN@x.example', 'ben@y.example', 'cat@z.example', 'dan@w.example'),
        }),
        { selector: (row) => row.suffix, maxLength: 10 },
      );
      await fc.assert(
        fc.asyncProperty(stored, fc.array(fc.boolean(), { maxLength: 10 }), fc.integer({ min: 0, max: 5 }), async (rows, keyed, since) => {
          run++;
          const inquiries = rows.map(({ suffix, fingerprint, at, body, sender }) => ({
            inquiry: { ...inquiry(`INQ-${run}${suffix}`, new Date(base + at)), email: sender },
            fingerprint: `fp ${run} ${fingerprint}`,
            bodyHash: body === null ? null : `body ${run} ${body}`,
          }));
          const keys = inquiries
            .filter((_, index) => keyed[index])
            .map(({ inquiry: { reference, receivedAt } }) => ({
              key: `key ${reference}`,
              requestHash: `hash ${reference}`,
              reference,
              createdAt: receivedAt,
              outcome: 'created' as const,
            }));
          await store.inquiries.insertMany(inquiries);
          await store.idempotency.insertMany(keys);
          const references = [...inquiries.map(({ inquiry }) => inquiry.reference), `INQ-${run}NONE`];
          const facts = await store.transaction((tx) =>
            store.intake.lookup(
              {
                keys: [...inquiries.map(({ inquiry }) => `key ${inquiry.reference}`), `key of ${run}`],
                fingerprints: [0, 1, 2, 3, 4].map((fingerprint) => `fp ${run} ${fingerprint}`),
                since: new Date(base + since),
                references,
                senders: { bodyHashes: [0, 1, 2, 3].map((body) => `body ${run} ${body}`), since: new Date(base + since), limit: 2 },
              },
              tx,
            ),
          );
          const recent = new Map<string, { reference: string; at: number }>();
          for (const { inquiry, fingerprint } of inquiries) {
            const at = inquiry.receivedAt.getTime();
            const earliest = recent.get(fingerprint);
            if (at < base + since) continue;
            if (!earliest || at < earliest.at || (at === earliest.at && inquiry.reference < earliest.reference)) {
              recent.set(fingerprint, { reference: inquiry.reference, at });
            }
          }
          const senders = new Map<string, Set<string>>();
          for (const { inquiry, bodyHash } of inquiries) {
            if (bodyHash === null || inquiry.receivedAt.getTime() < base + since) continue;
            senders.set(bodyHash, (senders.get(bodyHash) ?? new Set()).add(inquiry.email.toLowerCase()));
          }
          // The first two senders of each body, in address order.
          const firstSenders = [...senders].map(([body, all]) => [body, new Set([...all].sort().slice(0, 2))] as const);
          expect(facts).toEqual({
            keys: new Map(keys.map((key) => [key.key, key])),
            recent: new Map([...recent].map(([fingerprint, { reference }]) => [fingerprint, reference])),
            taken: new Set(references.slice(0, -1)),
            senders: new Map(firstSenders),
          });
        }),
        { numRuns: 40 },
      );
    });

    it("write an intake batch's inquiries, a delivery for each channel and its keys, all or nothing; one whose reference is taken is not written", async () => {
      await openTempStore();
      await store.inquiries.insertMany([{ inquiry: { ...inquiry('INQ-TAKEN0'), message: 'the first' }, fingerprint: 'fp-first' }]);
      const now = new Date('2026-01-01T00:00:00Z');
      const batch = ['INQ-WRITE0', 'INQ-TAKEN0', 'INQ-WRITE1'].map((reference) => ({
        inquiry: inquiry(reference, now),
        fingerprint: `fp-${reference}`,
      }));
      const keys = [{ key: 'key-0', requestHash: 'hash-0', reference: 'INQ-WRITE0', createdAt: now, outcome: 'created' as const }];
      const written = (writes: Omit<IntakeWrites, 'now'>) => store.transaction((tx) => store.intake.write({ ...writes, now }, tx));
      expect(await written({ inquiries: batch, channels: ['email', 'webhook'], keys })).toEqual(new Set(['INQ-WRITE0', 'INQ-WRITE1']));
      expect(await store.inquiries.findByReference('INQ-WRITE1')).toEqual(batch[2]?.inquiry);
      expect((await store.inquiries.findByReference('INQ-TAKEN0'))?.message).toBe('the first');
      const deliveries = await store.outbox.forReferences(['INQ-WRITE0', 'INQ-WRITE1']);
      expect(deliveries.map(({ reference, channel, status }) => `${reference} ${channel} ${status}`).sort()).toEqual([
        'INQ-WRITE0 email pending',
        'INQ-WRITE0 webhook pending',
        'INQ-WRITE1 email pending',
        'INQ-WRITE1 webhook pending',
      ]);
      expect(await store.idempotency.findMany(['key-0'])).toEqual(new Map([['key-0', keys[0]]]));
      // Only keys (every submission a replay or a fold): nothing else is written. Nothing at all: no statement.
      const replay = { key: 'key-1', requestHash: 'hash-1', reference: 'INQ-WRITE1', createdAt: now, outcome: 'duplicate' as const };
      expect(await written({ inquiries: [], channels: ['email'], keys: [replay] })).toEqual(new Set());
      expect((await store.idempotency.findMany(['key-1'])).get('key-1')).toEqual(replay);
      expect(await written({ inquiries: [], channels: ['email'], keys: [] })).toEqual(new Set());
      // A key that clashes fails the whole write: its inquiry is not stored either.
      await expect(
        written({
          inquiries: [{ inquiry: inquiry('INQ-WRITE2', now), fingerprint: 'fp-2' }],
          channels: ['email'],
          keys: [{ ...replay, reference: 'INQ-WRITE2' }],
        }),
      ).rejects.toThrow();
      expect(await store.inquiries.findByReference('INQ-WRITE2')).toBeUndefined();
      expect(await store.outbox.forReferences(['INQ-WRITE2'])).toEqual([]);
    });

    it('read a key stored before its outcome was kept (migration 009) as one whose request created its inquiry', async () => {
      await openTempStore();
      const now = new Date('2026-01-01T00:00:00Z');
      await store.inquiries.insertMany([{ inquiry: inquiry('INQ-OLDKEY', now), fingerprint: 'fp-old' }]);
      const opened = await openDatabase(database.config);
      await sql`insert into idempotency_keys (key, request_hash, reference, created_at) values ('old-key', 'h', 'INQ-OLDKEY', ${now.getTime()})`.execute(
        opened.db,
      );
      await opened.db.destroy();
      const expected = { key: 'old-key', requestHash: 'h', reference: 'INQ-OLDKEY', createdAt: now, outcome: 'created' };
      expect((await store.idempotency.findMany(['old-key'])).get('old-key')).toEqual(expected);
      const facts = await store.transaction((tx) =>
        store.intake.lookup({ keys: ['old-key'], fingerprints: [], since: now, references: [] }, tx),
      );
      expect(facts.keys.get('old-key')).toEqual(expected);
    });

    it('list page after page, each going on after the last row of the one before: every inquiry once, in order, ties included', async () => {
      await openTempStore();
      const base = Date.parse('2026-01-01T00:00:00Z');
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.record({ suffix: fc.stringMatching(/^[0-9A-Z]{4}$/), at: fc.integer({ min: 0, max: 3 }) }), {
            selector: (row) => row.suffix,
            maxLength: 25,
          }),
          fc.integer({ min: 1, max: 6 }),
          async (rows, pageSize) => {
            run++;
            // Each run in its own hour, listed with `since` that hour.
            const hour = base + run * 3_600_000;
            await store.inquiries.insertMany(
              rows.map(({ suffix, at }) => ({ inquiry: inquiry(`INQ-${run}${suffix}`, new Date(hour + at)), fingerprint: suffix })),
            );
            const since = new Date(hour);
            const whole = await store.inquiries.list({ limit: 100, since });
            const paged: InquiryRecord[] = [];
            let page: InquiryRecord[];
            // Bounded, so that a listing that goes round in circles fails rather than hangs.
            let pages = 0;
            do {
              const after = paged.at(-1);
              page = await store.inquiries.list({ limit: pageSize, since, ...(after && { after }) });
              paged.push(...page);
            } while (page.length === pageSize && ++pages <= rows.length);
            expect(whole).toHaveLength(rows.length);
            expect(whole.map(({ receivedAt }) => receivedAt.getTime())).toEqual(
              whole.map(({ receivedAt }) => receivedAt.getTime()).sort((a, b) => b - a),
            );
            expect(paged.map(({ reference }) => reference)).toEqual(whole.map(({ reference }) => reference));
          },
        ),
        { numRuns: 30 },
      );
    });

    it('count those received after a time, up to a limit (how fast all instances take them in)', async () => {
      await openTempStore();
      const received = ['00.000', '00.100', '00.150', '00.200'].map((second, index) => ({
        inquiry: inquiry(`INQ-DDDDD${index}`, new Date(`2026-01-01T00:00:${second}Z`)),
        fingerprint: `fp-${index}`,
      }));
      await store.inquiries.insertMany(received);
      const since = (second: string, limit: number) => store.inquiries.countReceivedSince(new Date(`2026-01-01T00:00:${second}Z`), limit);
      expect(await since('00.100', 10)).toBe(2); // after, not at
      expect(await since('00.000', 10)).toBe(3);
      expect(await since('00.000', 2)).toBe(2);
      expect(await since('00.200', 10)).toBe(0);
    });
  });
});

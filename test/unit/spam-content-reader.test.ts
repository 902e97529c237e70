// The content rules read on their own thread (src/spam/content-reader.ts): the same hits as read
// in-process, for the corpora and for any text; and a reading never lost when the thread dies or closes.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContentReader, THREAD_DEATHS_TOLERATED, threadReader } from '../../src/spam/content-reader.js';
import type { SpamInquiry } from '../../src/spam/types.js';
import { readContent } from '../../src/spam/verdict.js';

const FIXTURES = new URL('../fixtures/spam/', import.meta.url);
/** The thread's compiled module (vitest's global set-up builds dist/), as the service runs it. */
const WORKER = new URL('../../dist/spam/content-worker.js', import.meta.url);
const corpora = (folder: URL): SpamInquiry[] =>
  readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .flatMap((name) => JSON.parse(readFileSync(new URL(name, folder), 'utf8')) as SpamInquiry[]);

const field = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 80 }), fc.webUrl());
const inquiry = fc.record({
  firstName: field,
  lastName: field,
  email: fc.emailAddress(),
  company: fc.option(field),
  message: fc.string({ unit: 'grapheme', maxLength: 400 }),
});

const readers: ContentReader[] = [];
function opened(reader: ContentReader): ContentReader {
  readers.push(reader);
  return reader;
}
afterEach(async () => {
  await Promise.all(readers.splice(0).map((reader) => reader.close()));
});

const fixture = (name: string) => new URL(`../fixtures/workers/${name}.mjs`, import.meta.url);
const brief = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: null,
  message: 'We need a new website for our bakery.',
};
const pitch = {
  firstName: 'SEO',
  lastName: 'Team',
  email: 'x@mailinator.com',
  company: null,
  message: 'Boost your Google ranking: https://bit.ly/x',
};
const MARKED = { hits: [{ code: 'honeypot', points: 0, detail: 'read on the thread' }] };

describe('the content reader on its own thread', () => {
  it('finds in every corpus inquiry the hits the rules find in-process, asked all at once, the thread never dying', async () => {
    const deaths: unknown[] = [];
    const reader = opened(threadReader({ module: WORKER, onThreadDeath: (why) => deaths.push(why) }));
    const all = [...corpora(FIXTURES), ...corpora(new URL('holdout/', FIXTURES))];
    expect(all.length).toBeGreaterThan(2_000);
    const read = await Promise.all(all.map((one) => reader.read(one)));
    expect(read).toEqual(all.map(readContent));
    expect(read.filter(({ hits }) => hits.length > 0).length).toBeGreaterThan(all.length / 3);
    expect(deaths).toEqual([]);
  });

  it('finds the same hits as in-process for any text', async () => {
    const deaths: unknown[] = [];
    const reader = opened(threadReader({ module: WORKER, onThreadDeath: (why) => deaths.push(why) }));
    await fc.assert(
      fc.asyncProperty(inquiry, async (one) => {
        expect(await reader.read(one)).toEqual(readContent(one));
      }),
      { numRuns: 300 },
    );
    expect(deaths).toEqual([]);
  });

  it("answers with the thread's reading, one thread for every read", async () => {
    const starts: number[] = [];
    const reader = opened(threadReader({ module: fixture('marks-its-answers'), onThreadStart: () => starts.push(1) }));
    expect(await Promise.all([reader.read(brief), reader.read(pitch)])).toEqual([MARKED, MARKED]);
    expect(await reader.read(brief)).toEqual(MARKED);
    expect(starts).toHaveLength(1);
  });

  it('ends a thread that answers nothing in time and reads what it held in-process; the next read starts another', async () => {
    const deaths: string[] = [];
    const onThreadDeath = (why: unknown) => deaths.push(String(why));
    const reader = opened(threadReader({ module: fixture('marks-its-answers'), stallMs: 2_000, onThreadDeath }));
    const stalled = { ...brief, message: 'A website, please; stall' };
    expect(await reader.read(stalled)).toEqual(readContent(stalled));
    expect(deaths).toEqual(['Error: the thread answered nothing for 2000 ms']);
    expect(await reader.read(brief)).toEqual(MARKED);
  });

  it('reads in-process what a thread that died held; after three deaths in a row it starts no other', async () => {
    const deaths: boolean[] = [];
    const dies = opened(threadReader({ module: fixture('dies-on-message'), onThreadDeath: (_why, givenUp) => deaths.push(givenUp) }));
    expect(await Promise.all([dies.read(pitch), dies.read(brief)])).toEqual([readContent(pitch), readContent(brief)]);
    for (let read = 0; read < 4; read++) expect(await dies.read(pitch)).toEqual(readContent(pitch));
    expect(deaths).toEqual([false, false, true]);
    expect(deaths).toHaveLength(THREAD_DEATHS_TOLERATED);
  });

  it('reads in-process where the thread cannot even start (its module missing), saying why', async () => {
    const deaths: unknown[] = [];
    const missing = opened(threadReader({ module: fixture('no-such-module'), onThreadDeath: (why) => deaths.push(why) }));
    for (let read = 0; read < 4; read++) expect(await missing.read(brief)).toEqual(readContent(brief));
    expect(String(deaths[0])).toMatch(/no-such-module/);
  });

  it('answers the reads the thread holds when closed, and reads in-process once closed', async () => {
    const reader = threadReader({ module: WORKER });
    await reader.read(brief);
    const sent = Array.from({ length: 200 }, (_, i) => reader.read({ ...pitch, message: `${pitch.message} ${i}` }));
    await new Promise((resolve) => setImmediate(resolve)); // posted to the thread
    const queued = reader.read(brief);
    await reader.close();
    expect(await Promise.all(sent)).toEqual(sent.map((_, i) => readContent({ ...pitch, message: `${pitch.message} ${i}` })));
    expect(await queued).toEqual(readContent(brief));
    expect(await reader.read(brief)).toEqual(readContent(brief));
  });
});

// The content rules read on their own thread (src/spam/content-reader.ts): the same hits as read
// in-process, for the corpora and for any text; and a reading never lost when the thread dies or closes.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContentReader, THREAD_DEATHS_TOLERATED, threadReader } from '../../src/spam/content-reader.js';
import type { SpamInquiry } from '../../src/spam/types.js';
import { readContent } from '../../src/spam/verdict.js';
import { tempDir } from '../helpers/app.js';

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

describe('the content reader on its own thread', () => {
  it('finds in every corpus inquiry the hits the rules find in-process, asked all at once', async () => {
    const reader = opened(threadReader({ module: WORKER }));
    const all = [...corpora(FIXTURES), ...corpora(new URL('holdout/', FIXTURES))];
    expect(all.length).toBeGreaterThan(2_000);
    const read = await Promise.all(all.map((one) => reader.read(one)));
    expect(read).toEqual(all.map(readContent));
    expect(read.filter(({ hits }) => hits.length > 0).length).toBeGreaterThan(all.length / 3);
  });

  it('finds the same hits as in-process for any text', async () => {
    const reader = opened(threadReader({ module: WORKER }));
    await fc.assert(
      fc.asyncProperty(inquiry, async (one) => {
        expect(await reader.read(one)).toEqual(readContent(one));
      }),
      { numRuns: 300 },
    );
  });

  it('reads in-process what a thread that died held; after three deaths it starts no other', async () => {
    const deaths = join(tempDir(), 'deaths.txt');
    process.env.READER_DEATHS = deaths;
    const dies = opened(threadReader({ module: new URL('../fixtures/workers/dies-on-message.mjs', import.meta.url) }));
    const pitch = {
      firstName: 'SEO',
      lastName: 'Team',
      email: 'x@mailinator.com',
      company: null,
      message: 'Boost your Google ranking: https://bit.ly/x',
    };
    const brief = { ...pitch, firstName: 'Ada', lastName: 'Lovelace', message: 'We need a new website for our bakery.' };
    expect(await Promise.all([dies.read(pitch), dies.read(brief)])).toEqual([readContent(pitch), readContent(brief)]);
    for (let read = 0; read < 4; read++) expect(await dies.read(pitch)).toEqual(readContent(pitch));
    expect(readFileSync(deaths, 'utf8').split('\n').filter(Boolean)).toHaveLength(THREAD_DEATHS_TOLERATED);
    delete process.env.READER_DEATHS;
  });

  it('reads in-process where the thread cannot even start (its module missing)', async () => {
    const missing = opened(threadReader({ module: new URL('../fixtures/workers/no-such-module.mjs', import.meta.url) }));
    const brief = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', company: null, message: 'A new website, please.' };
    for (let read = 0; read < 4; read++) expect(await missing.read(brief)).toEqual(readContent(brief));
  });

  it('answers a read asked for while closing, and reads in-process once closed', async () => {
    const reader = threadReader({ module: WORKER });
    const one = {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      company: null,
      message: 'A shop for our tea, please: https://tea.example',
    };
    await reader.read(one);
    const during = reader.read(one);
    await reader.close();
    expect(await during).toEqual(readContent(one));
    expect(await reader.read(one)).toEqual(readContent(one));
  });
});

// The body hash that finds the same message from other senders: copies differing only in case,
// spacing or look-alike letters match, short bodies never count, and each other sender counts once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyHashOf, otherSenders, REPEAT_MIN_LENGTH } from '../../src/spam/repeats.js';

const BODY = 'We are looking for a studio to rebuild our online shop before the summer season.';

describe('bodyHashOf', () => {
  it('gives one hash for copies differing in case, spacing and look-alike letters', () => {
    const hash = bodyHashOf(BODY);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(bodyHashOf(`  ${BODY.toUpperCase()}\n`)).toBe(hash);
    expect(bodyHashOf(BODY.replaceAll(' ', '\n\t '))).toBe(hash);
    expect(bodyHashOf(BODY.replace('We', 'Ｗｅ'))).toBe(hash); // full-width letters fold (NFKC)
    expect(bodyHashOf(`${BODY} Thanks!`)).not.toBe(hash);
  });

  it(`never hashes a body under ${REPEAT_MIN_LENGTH} characters, counted in code points`, () => {
    expect(bodyHashOf('Hello, please call me back.')).toBeNull();
    expect(bodyHashOf('x'.repeat(REPEAT_MIN_LENGTH - 1))).toBeNull();
    expect(bodyHashOf('x'.repeat(REPEAT_MIN_LENGTH))).not.toBeNull();
    expect(bodyHashOf('😀'.repeat(REPEAT_MIN_LENGTH - 1))).toBeNull(); // 78 UTF-16 units, 39 characters
    expect(bodyHashOf(`   ${'x'.repeat(REPEAT_MIN_LENGTH - 1)}   `)).toBeNull();
  });

  it('depends only on the canonical text, for any message', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (message) => {
        const hash = bodyHashOf(message);
        expect(hash === null || /^[0-9a-f]{64}$/.test(hash)).toBe(true);
        expect(bodyHashOf(`\n ${message.replaceAll(' ', ' \t')}  `)).toBe(hash);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 300 }), (message) => {
        expect(bodyHashOf(message.toUpperCase())).toBe(bodyHashOf(message.toLowerCase()));
      }),
    );
  });
});

describe('otherSenders', () => {
  it('counts each other address once, never the sender, whatever its case', () => {
    expect(otherSenders([], 'ann@x.example')).toBe(0);
    expect(otherSenders(['ann@x.example'], 'Ann@X.example')).toBe(0);
    expect(otherSenders(['ann@x.example', 'ben@y.example', 'ben@y.example'], 'ann@x.example')).toBe(1);
    expect(otherSenders(['ben@y.example', 'cat@z.example'], 'ann@x.example')).toBe(2);
  });
});

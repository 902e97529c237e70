// spam_vocabulary's words: how a text is cut into terms, and the shipped weights are those the
// training script learns from the tuning corpora (so they cannot drift from them unnoticed).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { learnWeights, trainedWeights } from '../../scripts/train-spam-vocabulary.js';
import { spamLogOdds, vocabularyOf } from '../../src/spam/vocabulary.js';

describe('vocabularyOf', () => {
  it('gives folded words and adjacent pairs, Chinese and Japanese in pairs of characters', () => {
    expect(vocabularyOf('Get MORE clients, get more clients!')).toEqual([
      'get',
      'more',
      'clients',
      'get more',
      'more clients',
      'clients get',
    ]);
    expect(vocabularyOf('网站排名')).toEqual(['网站', '站排', '排名', '网站 站排', '站排 排名']);
    expect(vocabularyOf('𝐒𝐄𝐎 ｗｗｗ')).toEqual(['seo', 'www', 'seo www']);
  });

  it('never throws, and gives the same terms whatever the case, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), (text) => {
        expect(vocabularyOf(text.toUpperCase())).toEqual(vocabularyOf(text.toLowerCase()));
        expect(Number.isFinite(spamLogOdds(text))).toBe(true);
      }),
    );
  });
});

describe('spamLogOdds', () => {
  const shipped: Record<string, number> = JSON.parse(readFileSync(new URL('../../src/spam/vocabulary.json', import.meta.url), 'utf8'));
  const words = [...new Set(Object.keys(shipped).flatMap((term) => term.split(' ')))];

  it('is the sum of the weights of the terms vocabularyOf gives, for any text', () => {
    const piece = fc.oneof(
      fc.constantFrom(...words),
      fc.constantFrom(...words).map((word) => word.toUpperCase()),
      fc.constantFrom(' ', ' ', '\n', ', ', '-', '𝐒𝐄𝐎', 'ｗｗｗ', '网站排名', 'é'),
      fc.string({ maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const sum = vocabularyOf(text).reduce((total, term) => total + (shipped[term] ?? 0), 0);
        // Added in another order, the rounded sums may differ by one hundredth, no more.
        expect(Math.abs(spamLogOdds(text) - Math.round(sum * 100) / 100)).toBeLessThan(0.015);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the weights', () => {
  it('are learned as log-likelihood ratios, leaving out words seen once and words as common in both', () => {
    const weights = learnWeights(['we need a site', 'we need an app'], ['we help you', 'we help them']);
    expect(weights['we need']).toBeCloseTo(Math.log(1 / 4 / (3 / 4)), 2);
    expect(weights['we help']).toBeCloseTo(Math.log(3 / 4 / (1 / 4)), 2);
    expect(weights.we).toBeUndefined();
    expect(weights.site).toBeUndefined();
  });

  it('shipped in src/spam/vocabulary.json are those the tuning corpora give', () => {
    const shipped = JSON.parse(readFileSync(new URL('../../src/spam/vocabulary.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(trainedWeights());
  });
});

// The spam rules against the corpora in test/fixtures/spam (see its README): no brief quarantined,
// at least 90 % of the spam quarantined, on content alone.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NEUTRAL_SIGNALS, type SpamInquiry } from '../../src/spam/types.js';
import { judge } from '../../src/spam/verdict.js';

function corpus(name: 'briefs' | 'spam'): SpamInquiry[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/spam/${name}.json`, import.meta.url), 'utf8'));
}

describe('the corpora', () => {
  it('quarantine no project brief', () => {
    const briefs = corpus('briefs');
    expect(briefs.length).toBeGreaterThanOrEqual(40);
    const quarantined = briefs.filter((brief) => judge(brief, NEUTRAL_SIGNALS).verdict === 'spam');
    console.log(`spam corpora: ${quarantined.length} of ${briefs.length} briefs quarantined`);
    expect(quarantined).toEqual([]);
  });

  it('quarantine at least 90 % of the spam', () => {
    const spam = corpus('spam');
    expect(spam.length).toBeGreaterThanOrEqual(40);
    const caught = spam.filter((inquiry) => judge(inquiry, NEUTRAL_SIGNALS).verdict === 'spam').length;
    const rate = caught / spam.length;
    console.log(`spam corpora: ${caught} of ${spam.length} spam messages quarantined (${(rate * 100).toFixed(1)} %)`);
    expect(rate).toBeGreaterThanOrEqual(0.9);
  });
});

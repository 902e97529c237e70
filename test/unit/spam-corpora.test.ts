// The spam rules against the corpora in test/fixtures/spam (see its README), on content alone: no
// brief quarantined, in the sets the rules were tuned on and in the hold-out set they never were;
// the share of spam quarantined in each.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NEUTRAL_SIGNALS, type SpamInquiry } from '../../src/spam/types.js';
import { judge } from '../../src/spam/verdict.js';

function corpus(name: string): SpamInquiry[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/spam/${name}.json`, import.meta.url), 'utf8'));
}

const SETS = [
  {
    name: 'tuning',
    briefs: ['briefs', 'briefs-2', 'briefs-3', 'briefs-4', 'briefs-5', 'briefs-6', 'briefs-7'].flatMap(corpus),
    spam: ['spam', 'spam-2', 'spam-3', 'spam-4', 'spam-5', 'spam-6', 'spam-7'].flatMap(corpus),
    spamCaught: 0.9,
  },
  // Never tuned against (README): 77.5 % when the rules were last changed. The target is 90 %; this
  // floor guards against a change that makes the filter worse at spam it has not seen.
  { name: 'hold-out', briefs: corpus('holdout/briefs'), spam: corpus('holdout/spam'), spamCaught: 0.75 },
];

describe.each(SETS)('the $name corpora', ({ name, briefs, spam, spamCaught }) => {
  it('quarantine no project brief', () => {
    expect(briefs.length).toBeGreaterThanOrEqual(50);
    const quarantined = briefs.filter((brief) => judge(brief, NEUTRAL_SIGNALS).verdict === 'spam');
    console.log(`spam corpora (${name}): ${quarantined.length} of ${briefs.length} briefs quarantined`);
    expect(quarantined).toEqual([]);
  });

  it(`quarantine at least ${spamCaught * 100} % of the spam`, () => {
    expect(spam.length).toBeGreaterThanOrEqual(50);
    const caught = spam.filter((inquiry) => judge(inquiry, NEUTRAL_SIGNALS).verdict === 'spam').length;
    const rate = caught / spam.length;
    console.log(`spam corpora (${name}): ${caught} of ${spam.length} spam messages quarantined (${(rate * 100).toFixed(1)} %)`);
    expect(rate).toBeGreaterThanOrEqual(spamCaught);
  });
});

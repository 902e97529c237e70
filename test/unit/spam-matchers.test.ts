// The spam rules' fast matchers against the plain patterns they stand for: the same phrases, topic
// and links found on any text (fast-check), and every odd-case letter listed in case-fold.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ODD_CASE } from '../../src/spam/case-fold.js';
import { MONEY_PROMISE, promisesMoney } from '../../src/spam/hype.js';
import { EMAIL_PATTERN, findEmailAddresses, findLinks, hasMarkupLink, LINK_PATTERN, MARKUP_LINK_PATTERN } from '../../src/spam/links.js';
import { joinSpeltOut } from '../../src/spam/obfuscation.js';
import { PITCH, STRONG, WEAK } from '../../src/spam/phrase-lists.js';
import { findSpamPhrases } from '../../src/spam/phrases.js';
import { namesStudioWork, OTHER_TOPIC_PATTERN, PLAIN_TOPIC_WORDS, TOPIC_WORDS } from '../../src/spam/topic.js';

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const PHRASES = [...WEAK, ...PITCH, ...STRONG].map((phrase) => phrase.toLowerCase().replace(/\s+/gu, ' '));

/** The phrases found by one scan of one pattern of all phrases, each place tried. */
function referencePhrases(text: string): string[] {
  const bodies = [...new Set(PHRASES)].sort((a, b) => b.length - a.length).map((phrase) => escapeRegExp(phrase).replace(/\s+/g, '\\s+'));
  const unspaced = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
  const spaced = bodies.filter((body) => !unspaced.test(body)).join('|');
  const patterns = [
    new RegExp(`(?<![\\p{L}\\p{N}])(?:${spaced})(?![\\p{L}\\p{N}])`, 'giu'),
    new RegExp(`(?:${bodies.filter((body) => unspaced.test(body)).join('|')})`, 'giu'),
  ];
  const found = new Set<string>();
  for (const pattern of patterns) {
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const key = match[0].toLowerCase().replace(/\s+/gu, ' ');
      if (PHRASES.includes(key)) found.add(key);
      pattern.lastIndex = match.index + 1;
    }
  }
  return [...found];
}

/** The text with its spelt-out runs joined by the one plain pattern. */
function referenceJoined(text: string): string {
  const spelt = /(?<![\p{L}\p{N}])[a-z](?:([.\-_ ])[a-z])(?:\1[a-z])+(?![\p{L}\p{N}])\.?/giu;
  return text.replace(spelt, (run) => run.replace(/[^a-z]/giu, ''));
}

const ODD = ['ſ', 'İ', 'ς', 'K', 'ᲀ', 'µ', 'Σ', 'ß', 'ẞ'];
const pieces = [
  ...PHRASES,
  ...PLAIN_TOPIC_WORDS,
  'web site',
  'pages',
  'EC',
  'ios',
  'WWW.',
  'a.com',
  'http://',
  'bit.ly/x',
  'a@b.com',
  '<a href',
  '[url=',
  'S.E.O',
  'b-a-c-k',
];
const piece = fc.oneof(
  fc.constantFrom(...pieces).map((text) => text.toUpperCase()),
  fc.constantFrom(...pieces),
  fc.constantFrom(...ODD, ' ', '  ', '\n', '-', '.', '/', ':', '"', '\u00a0'),
  fc.string({ maxLength: 4 }),
  fc.string({ unit: 'grapheme', maxLength: 3 }),
);
const text = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''));

describe('the fast matchers, for any text', () => {
  it('find the phrases one scan of the whole pattern finds', () => {
    fc.assert(
      fc.property(text, (anyText) => {
        expect(findSpamPhrases(anyText).map(({ phrase }) => phrase)).toEqual(referencePhrases(anyText));
      }),
      { numRuns: 600 },
    );
  });

  it("name the studio's work exactly where the whole topic pattern does", () => {
    const topic = new RegExp(TOPIC_WORDS.join('|'), 'iu');
    fc.assert(
      fc.property(text, (anyText) => {
        expect(namesStudioWork(anyText)).toBe(topic.test(anyText));
      }),
      { numRuns: 600 },
    );
  });

  it('find the links and spelt-out words the plain patterns find', () => {
    fc.assert(
      fc.property(text, (anyText) => {
        expect(joinSpeltOut(anyText).text).toBe(referenceJoined(anyText));
        expect(findLinks(anyText)).toEqual(anyText.replace(EMAIL_PATTERN, ' ').match(LINK_PATTERN) ?? []);
        expect(findEmailAddresses(anyText)).toEqual(anyText.match(EMAIL_PATTERN) ?? []);
        expect(hasMarkupLink(anyText)).toBe(MARKUP_LINK_PATTERN.test(anyText));
      }),
      { numRuns: 300 },
    );
  });
});

describe('joinSpeltOut, for text of single letters and separators', () => {
  it('joins the runs the plain pattern finds', () => {
    const part = fc.constantFrom('a', 'B', 'ſ', 'K', 'é', '7', '.', '-', '_', ' ', 'S.E.O', 'word', '\n');
    fc.assert(
      fc.property(fc.array(part, { maxLength: 20 }), (parts) => {
        const text = parts.join('');
        expect(joinSpeltOut(text).text).toBe(referenceJoined(text));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('promisesMoney, for any text', () => {
  it('finds money promised where the whole pattern does', () => {
    const amounts = ['$500', 'R$ 50', 'uſd 100', 'Usd 9', '15 000 ₽', '20 руб', '3k EUR', '€5', '7 euro', '¥8', '₫9', '£1', '₹2'];
    const money = fc.oneof(
      fc.constantFrom(...amounts, 'earn', 'bonus', ' per day', 'в день', '每天', 'turned'),
      fc.constantFrom(' ', '. ', 'x', '12', '\n'),
      fc.string({ maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(money, { maxLength: 12 }), (parts) => {
        expect(promisesMoney(parts.join(''))).toBe(MONEY_PROMISE.test(parts.join('')));
      }),
      { numRuns: 600 },
    );
  });
});

describe('case folding', () => {
  it('lists every letter whose lower case is not what the iu flags take it for', () => {
    const byLower = new Map<string, string[]>();
    let all = '';
    for (let code = 0; code <= 0x10ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      all += char;
      byLower.set(char.toLowerCase(), [...(byLower.get(char.toLowerCase()) ?? []), char]);
    }
    const words = [...PHRASES.map((phrase) => phrase.match(/^[\p{L}\p{N}]+/u)?.[0] ?? ''), ...PLAIN_TOPIC_WORDS];
    const odd: string[] = [];
    for (const letter of new Set(words.flatMap((word) => [...word]))) {
      const taken = new Set([...all.matchAll(new RegExp(escapeRegExp(letter), 'giu'))].map(([char]) => char));
      const lowered = new Set(byLower.get(letter) ?? []);
      for (const char of [...taken, ...lowered]) if (taken.has(char) !== lowered.has(char)) odd.push(char);
    }
    expect(odd.filter((char) => !ODD_CASE.test(char))).toEqual([]);
  });

  it('keeps every letter at its index when lower-casing text without odd-case letters', () => {
    const longer: string[] = [];
    for (let code = 0; code <= 0x10ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (char.toLowerCase().length !== char.length && !ODD_CASE.test(char)) longer.push(char);
    }
    expect(longer).toEqual([]);
  });

  it('keeps the topic pattern matched without the u flag to ASCII', () => {
    expect(OTHER_TOPIC_PATTERN.source).toMatch(/^[\x20-\x7e]*$/);
    expect(OTHER_TOPIC_PATTERN.flags).not.toContain('u');
  });
});

// Phrasing of the common kinds of contact-form spam (phrase-lists.ts), matched case-insensitively
// on whole words.
import { NOT_ASCII, ODD_CASE } from './case-fold.js';
import { PITCH, STRONG, WEAK } from './phrase-lists.js';

export type PhraseStrength = 'strong' | 'pitch' | 'weak';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Chinese and Japanese write no spaces between words: a phrase in them is matched anywhere. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

export interface FoundPhrase {
  phrase: string;
  strength: PhraseStrength;
}

/** A phrase as matched text is compared: lower case, runs of whitespace as one space. */
const keyOf = (text: string): string => text.toLowerCase().replace(/\s+/gu, ' ');

const BY_KEY = new Map<string, FoundPhrase>();
for (const [list, strength] of [
  [WEAK, 'weak'],
  [PITCH, 'pitch'],
  [STRONG, 'strong'],
] as const) {
  for (const phrase of list) BY_KEY.set(keyOf(phrase), { phrase: keyOf(phrase), strength });
}

/** Longest first, so that a scan finds "guest posts" before "guest post". */
const byLength = (phrases: readonly string[]): string[] => [...phrases].sort((a, b) => b.length - a.length);

/** One pattern for the phrases, in the order given; `flags` 'giu' to scan, 'yiu' to try at one place. */
function alternation(phrases: readonly string[], bounded: boolean, flags: string): RegExp {
  const bodies = phrases.map((phrase) => escapeRegExp(phrase).replace(/\s+/g, '\\s+')).join('|');
  const pattern = bounded ? `(?<![\\p{L}\\p{N}])(?:${bodies})(?![\\p{L}\\p{N}])` : `(?:${bodies})`;
  return new RegExp(pattern, flags);
}

const PHRASE_KEYS = [...BY_KEY.keys()];
const SPACED_KEYS = byLength(PHRASE_KEYS.filter((phrase) => !UNSPACED.test(phrase)));
const ANYWHERE = alternation(byLength(PHRASE_KEYS.filter((phrase) => UNSPACED.test(phrase))), false, 'giu');

/** A word: a run of letters and digits. A spaced phrase starts at one and spans its first word exactly. */
const WORD = /[\p{L}\p{N}]+/gu;
const firstWordOf = (phrase: string): string => phrase.match(/^[\p{L}\p{N}]+/u)?.[0] ?? '';

/** Per first word, the phrases starting with it (longest first), tried where a word of the text is that one. */
const BY_FIRST_WORD = new Map<string, RegExp>();
for (const first of new Set(SPACED_KEYS.map(firstWordOf))) {
  BY_FIRST_WORD.set(
    first,
    alternation(
      SPACED_KEYS.filter((phrase) => firstWordOf(phrase) === first),
      true,
      'yiu',
    ),
  );
}
/** All spaced phrases, for a word with an odd-case letter. */
const SPACED_AT = alternation(SPACED_KEYS, true, 'yiu');

/** The phrase matched at `index` by the sticky `pattern`, if any. */
function phraseAt(pattern: RegExp | undefined, text: string, index: number): FoundPhrase | undefined {
  if (pattern === undefined) return undefined;
  pattern.lastIndex = index;
  const match = pattern.exec(text);
  return match === null ? undefined : BY_KEY.get(keyOf(match[0]));
}

/** On ASCII text, WORD without the u flag: the same words, found faster. */
const ASCII_WORD = /[a-z0-9]+/g;

/** The distinct listed phrases the text contains, those inside a longer one too ("your website" in "visited your website"). */
export function findSpamPhrases(text: string): FoundPhrase[] {
  const found = new Map<string, FoundPhrase>();
  const take = (phrase: FoundPhrase | undefined): void => {
    if (phrase) found.set(phrase.phrase, phrase);
  };
  if (ODD_CASE.test(text)) {
    for (const word of text.matchAll(WORD))
      take(phraseAt(ODD_CASE.test(word[0]) ? SPACED_AT : BY_FIRST_WORD.get(word[0].toLowerCase()), text, word.index));
  } else {
    // Without odd-case letters, lower-casing keeps every letter at its index: words are looked up as found.
    const lower = text.toLowerCase();
    const words = NOT_ASCII.test(lower) ? WORD : ASCII_WORD;
    words.lastIndex = 0;
    for (let word = words.exec(lower); word !== null; word = words.exec(lower))
      take(phraseAt(BY_FIRST_WORD.get(word[0]), text, word.index));
  }
  if (UNSPACED.test(text)) {
    ANYWHERE.lastIndex = 0;
    for (let match = ANYWHERE.exec(text); match !== null; match = ANYWHERE.exec(text)) {
      const phrase = BY_KEY.get(keyOf(match[0]));
      if (phrase) found.set(phrase.phrase, phrase);
      ANYWHERE.lastIndex = match.index + 1; // the next match may start inside this one
    }
  }
  return [...found.values()];
}

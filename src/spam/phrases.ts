// Phrasing of the common kinds of contact-form spam (phrase-lists.ts), matched case-insensitively
// on whole words.
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

/** One pattern for all phrases, longest first, so that a scan finds "guest posts" before "guest post". */
function alternation(phrases: readonly string[], bounded: boolean): RegExp {
  const bodies = [...phrases]
    .sort((a, b) => b.length - a.length)
    .map((phrase) => escapeRegExp(phrase).replace(/\s+/g, '\\s+'))
    .join('|');
  const pattern = bounded ? `(?<![\\p{L}\\p{N}])(?:${bodies})(?![\\p{L}\\p{N}])` : `(?:${bodies})`;
  return new RegExp(pattern, 'giu');
}

const PHRASE_KEYS = [...BY_KEY.keys()];
const SPACED = alternation(
  PHRASE_KEYS.filter((phrase) => !UNSPACED.test(phrase)),
  true,
);
const ANYWHERE = alternation(
  PHRASE_KEYS.filter((phrase) => UNSPACED.test(phrase)),
  false,
);

/** The distinct listed phrases the text contains, those inside a longer one too ("your website" in "visited your website"). */
export function findSpamPhrases(text: string): FoundPhrase[] {
  const found = new Map<string, FoundPhrase>();
  for (const pattern of [SPACED, ANYWHERE]) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const phrase = BY_KEY.get(keyOf(match[0]));
      if (phrase) found.set(phrase.phrase, phrase);
      pattern.lastIndex = match.index + 1; // the next match may start inside this one
    }
  }
  return [...found.values()];
}

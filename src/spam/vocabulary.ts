// spam_vocabulary: a naive Bayes reading of the message's words and word pairs, with weights
// learned from the tuning corpora by scripts/train-spam-vocabulary.ts (docs/spam.md).
import { readFileSync } from 'node:fs';
import { NOT_ASCII, nfkc } from './case-fold.js';

/** Chinese and Japanese put no spaces between words: their text is read in pairs of characters. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const WORD = /[\p{L}\p{N}$€£₽]+/gu;
/** On ASCII text, WORD without the u flag: the same words, found faster. */
const ASCII_WORD = /[a-z0-9$]+/g;

/** Calls `take` with each word of a folded (NFKC, lower-case) text, in order. */
function eachWord(folded: string, take: (word: string) => void): void {
  const ascii = !NOT_ASCII.test(folded);
  const pattern = ascii ? ASCII_WORD : WORD;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(folded); match !== null; match = pattern.exec(folded)) {
    const [word] = match;
    if (ascii || !UNSPACED.test(word)) take(word);
    else for (let index = 0; index + 1 < word.length; index += 1) take(word.slice(index, index + 2));
  }
}

const fold = (text: string): string => nfkc(text).toLowerCase();

/** The distinct words and adjacent word pairs of a text, folded (NFKC, lower case). */
export function vocabularyOf(text: string): string[] {
  const words: string[] = [];
  eachWord(fold(text), (word) => words.push(word));
  const pairs = words.slice(1).map((word, index) => `${words[index]} ${word}`);
  return [...new Set([...words, ...pairs])];
}

interface Weighted {
  /** The log of how much likelier the term is in spam than in a brief (0: no weight learned). */
  weight: number;
  /** The number of the last reading that counted it: each term counts once a reading. */
  read: number;
}
interface Word extends Weighted {
  /** The weighted pairs this word starts, by their second word. */
  readonly pairs: Map<string, Weighted>;
}

/** The learned weights by word, each word's pairs under it: a pair is found without joining its words. */
const WORDS = new Map<string, Word>();
const wordOf = (word: string): Word => {
  const known = WORDS.get(word);
  if (known !== undefined) return known;
  const entry: Word = { weight: 0, read: 0, pairs: new Map() };
  WORDS.set(word, entry);
  return entry;
};
for (const [term, weight] of Object.entries(
  JSON.parse(readFileSync(new URL('./vocabulary.json', import.meta.url), 'utf8')) as Record<string, number>,
)) {
  const space = term.indexOf(' ');
  if (space === -1) wordOf(term).weight = weight;
  else wordOf(term.slice(0, space)).pairs.set(term.slice(space + 1), { weight, read: 0 });
}
let reading = 0;

/** The message's log-odds of spam against a brief, from its words alone (0: no evidence either way). */
export function spamLogOdds(text: string): number {
  // The sum over vocabularyOf(text), without building its list of terms.
  const current = ++reading;
  let sum = 0;
  const count = (term: Weighted | undefined): void => {
    if (term === undefined || term.read === current) return;
    term.read = current;
    sum += term.weight;
  };
  let previous: Word | undefined;
  eachWord(fold(text), (word) => {
    count(previous?.pairs.get(word));
    previous = WORDS.get(word);
    count(previous);
  });
  return Math.round(sum * 100) / 100;
}

// spam_vocabulary: a naive Bayes reading of the message's words and word pairs, with weights
// learned from the tuning corpora by scripts/train-spam-vocabulary.ts (docs/spam.md).
import { readFileSync } from 'node:fs';

/** Chinese and Japanese put no spaces between words: their text is read in pairs of characters. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** The distinct words and adjacent word pairs of a text, folded (NFKC, lower case). */
export function vocabularyOf(text: string): string[] {
  const words: string[] = [];
  for (const [word] of text
    .normalize('NFKC')
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}$€£₽]+/gu)) {
    if (!UNSPACED.test(word)) words.push(word);
    else for (let index = 0; index + 1 < word.length; index += 1) words.push(word.slice(index, index + 2));
  }
  const pairs = words.slice(1).map((word, index) => `${words[index]} ${word}`);
  return [...new Set([...words, ...pairs])];
}

/** Per word or pair, the log of how much likelier it is in spam than in a brief. */
const WEIGHTS: ReadonlyMap<string, number> = new Map(
  Object.entries(JSON.parse(readFileSync(new URL('./vocabulary.json', import.meta.url), 'utf8')) as Record<string, number>),
);

/** The message's log-odds of spam against a brief, from its words alone (0: no evidence either way). */
export function spamLogOdds(text: string): number {
  let sum = 0;
  for (const term of vocabularyOf(text)) sum += WEIGHTS.get(term) ?? 0;
  return Math.round(sum * 100) / 100;
}

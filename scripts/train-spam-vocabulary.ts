// Learns spam_vocabulary's weights from the tuning corpora (test/fixtures/spam, never the hold-out
// set) and writes src/spam/vocabulary.json: `node --import tsx scripts/train-spam-vocabulary.ts`.
import { readFileSync, writeFileSync } from 'node:fs';
import { vocabularyOf } from '../src/spam/vocabulary.js';

export const TUNING_BRIEFS = ['briefs', ...[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((n) => `briefs-${n}`)];
export const TUNING_SPAM = ['spam', ...[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((n) => `spam-${n}`)];
/** Words seen fewer times than this in both corpora together say nothing general. */
const MIN_COUNT = 2;

const corpus = (name: string): { message: string }[] =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/spam/${name}.json`, import.meta.url), 'utf8'));

/** Per word, its log-likelihood ratio spam : brief, by document counts with add-one smoothing. */
export function learnWeights(briefs: readonly string[], spam: readonly string[]): Record<string, number> {
  const count = (texts: readonly string[]) => {
    const counts = new Map<string, number>();
    for (const text of texts) for (const term of vocabularyOf(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
    return counts;
  };
  const [inBriefs, inSpam] = [count(briefs), count(spam)];
  const weights: Record<string, number> = {};
  for (const term of [...new Set([...inBriefs.keys(), ...inSpam.keys()])].sort()) {
    const [b, s] = [inBriefs.get(term) ?? 0, inSpam.get(term) ?? 0];
    if (b + s < MIN_COUNT) continue;
    const weight = Math.round(Math.log((s + 1) / (spam.length + 2) / ((b + 1) / (briefs.length + 2))) * 100) / 100;
    if (weight !== 0) weights[term] = weight; // a word as common in both says nothing
  }
  return weights;
}

export function trainedWeights(): Record<string, number> {
  const texts = (names: string[]) => names.flatMap(corpus).map(({ message }) => message);
  return learnWeights(texts(TUNING_BRIEFS), texts(TUNING_SPAM));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const weights = trainedWeights();
  writeFileSync(new URL('../src/spam/vocabulary.json', import.meta.url), `${JSON.stringify(weights, null, 0)}\n`);
  process.stdout.write(`src/spam/vocabulary.json: ${Object.keys(weights).length} words and pairs\n`);
}

// The thread the content rules run on (content-reader.ts): reads each inquiry of a batch and answers
// its hits, or null where reading threw (the caller then reads it itself and sees the same error).
import { parentPort } from 'node:worker_threads';
import type { RuleHit } from './rules.js';
import type { SpamInquiry } from './types.js';
import { readContent } from './verdict.js';

export type ReadRequest = readonly [id: number, inquiry: SpamInquiry];
export type ReadAnswer = readonly [id: number, hits: readonly RuleHit[] | null];

parentPort?.on('message', (batch: readonly ReadRequest[]) => {
  const answers = batch.map(([id, inquiry]): ReadAnswer => {
    try {
      return [id, readContent(inquiry).hits];
    } catch {
      return [id, null];
    }
  });
  parentPort?.postMessage(answers);
});

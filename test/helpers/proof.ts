// Proofs of work as the contact page makes them: a challenge solved with ALTCHA's own loop (Node's
// PBKDF2 here, WebCrypto's in the page's worker) and sent as base64 of its JSON payload.
import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';

export interface SolvedProof {
  /** The Altcha header's value. */
  readonly header: string;
  readonly solution: { readonly counter: number; readonly derivedKey: string };
}

export async function solveProof(challenge: Challenge): Promise<SolvedProof> {
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error('the challenge was not solved');
  return { header: encodeProof({ challenge, solution }), solution };
}

/** Base64 of the JSON of `value`, as the page encodes its payload. */
export const encodeProof = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

/** The payload an Altcha header carries. */
export const decodeProof = (header: string) =>
  JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { challenge: Challenge; solution: { counter: number; time?: number } };

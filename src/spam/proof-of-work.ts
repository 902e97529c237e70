// The contact page's proof of work (ALTCHA; docs/spam.md): challenges signed with a key every
// instance reads from the database, so that any instance verifies what another issued, and each
// proof counted once, wherever it is sent again.
import { createHmac, randomBytes } from 'node:crypto';
import { type Challenge, createChallenge, randomInt, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { ProofStore } from '../storage/ports.js';
import type { ProofSignal } from './types.js';

/** PBKDF2 runs natively in browsers (WebCrypto): a page pays little more per attempt than a bot's native code. */
export const PROOF_ALGORITHM = 'PBKDF2/SHA-256';
/** How long a challenge may be answered: the page solves another when the person is still typing near the end. */
export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;
/**
 * The difficulty: PBKDF2 iterations per attempt, and the range the answer (the attempts needed) is
 * drawn from, so that a phone's worker is done before the person has typed their name (docs/spam.md).
 */
export const PROOF_COST = 2_000;
export const PROOF_ATTEMPTS = { min: 100, max: 300 } as const;
/** Longer headers are not decoded: a real proof is about 600 characters. */
export const MAX_PROOF_LENGTH = 4_096;
/** The database row holding the key that signs challenges. */
const SECRET_NAME = 'proof-of-work';

export interface ProofOfWork {
  /** A new signed challenge, as ALTCHA's solvers take it. */
  challenge(): Promise<Challenge>;
  /**
   * What a proof (the `Altcha` header: base64 of ALTCHA's JSON payload) is worth: none sent is
   * `missing`; a valid, fresh one used for the first time `valid`; anything else `invalid`. Never throws.
   */
  check(payload: string | undefined): Promise<ProofSignal>;
}

/** Reads the signing key, making it on first start (every instance then reads the one stored first). */
export async function loadProofOfWork(store: ProofStore, now: () => Date = () => new Date()): Promise<ProofOfWork> {
  const key = await store.secret(SECRET_NAME, randomBytes(32).toString('base64url'));
  const secrets = {
    hmacSignatureSecret: createHmac('sha256', key).update('challenge').digest('hex'),
    // Signs the answer's key, so that checking a proof is an HMAC rather than the work again.
    hmacKeySignatureSecret: createHmac('sha256', key).update('derived-key').digest('hex'),
  };

  return {
    challenge: () =>
      createChallenge({
        algorithm: PROOF_ALGORITHM,
        cost: PROOF_COST,
        counter: randomInt(PROOF_ATTEMPTS.max, PROOF_ATTEMPTS.min),
        deriveKey,
        expiresAt: new Date(now().getTime() + CHALLENGE_LIFETIME_MS),
        ...secrets,
      }),

    async check(payload) {
      if (payload === undefined) return 'missing';
      const proof = decodeProof(payload);
      if (proof === null) return 'invalid';
      const { parameters, signature } = proof.challenge;
      const expiresAt = parameters.expiresAt;
      if (typeof expiresAt !== 'number' || expiresAt * 1000 <= now().getTime() || parameters.algorithm !== PROOF_ALGORITHM) {
        return 'invalid';
      }
      try {
        const result = await verifySolution({ challenge: proof.challenge, solution: proof.solution, deriveKey, ...secrets });
        if (!result.verified) return 'invalid';
      } catch {
        return 'invalid';
      }
      try {
        return (await store.spend(signature, new Date(expiresAt * 1000))) ? 'valid' : 'invalid';
      } catch {
        // The database cannot say whether it was used: neither for nor against the inquiry.
        return 'missing';
      }
    },
  };
}

type Proof = { challenge: Challenge & { signature: string }; solution: Parameters<typeof verifySolution>[0]['solution'] };

/** ALTCHA's payload: base64 of {challenge: {parameters, signature}, solution}; null for anything else. */
function decodeProof(payload: string): Proof | null {
  if (payload.length > MAX_PROOF_LENGTH || !/^[A-Za-z0-9+/]+={0,2}$/.test(payload)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (!isObject(value) || !isObject(value.challenge) || !isObject(value.solution)) return null;
  const { parameters, signature } = value.challenge;
  if (!isObject(parameters) || typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return null;
  return value as Proof;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

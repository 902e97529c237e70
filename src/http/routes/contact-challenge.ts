// GET /api/contact/challenge (docs/api.md): a proof-of-work challenge for the contact page, signed by
// the service (src/spam/proof-of-work.ts), never cached, with no cookie. Limited per client address:
// making one costs the service a key derivation.
import type { FastifyInstance } from 'fastify';
import type { ProofOfWork } from '../../spam/proof-of-work.js';
import { CHALLENGE_PATH } from '../../web/page.js';

/** Per client address: far more than a page asks for (one per visit, one every few minutes while someone types). */
export const CHALLENGE_RATE_LIMIT = { max: 30, timeWindow: 60_000 } as const;

export interface ContactChallengeOptions {
  readonly proofOfWork: Pick<ProofOfWork, 'challenge'>;
  /** CHALLENGE_RATE_LIMIT unless given (tests that load the page often raise it). */
  readonly limit?: { readonly max: number; readonly timeWindow: number };
}

/** The challenge as ALTCHA's solvers take it; `parameters` is signed whole, in `signature`. */
export const challengeSchema = {
  $id: 'ProofOfWorkChallenge',
  type: 'object',
  additionalProperties: false,
  required: ['parameters', 'signature'],
  properties: {
    parameters: {
      type: 'object',
      required: ['algorithm', 'nonce', 'salt', 'cost', 'keyLength', 'keyPrefix', 'expiresAt'],
      properties: {
        algorithm: { type: 'string', const: 'PBKDF2/SHA-256' },
        nonce: { type: 'string', pattern: '^[0-9a-f]+$' },
        salt: { type: 'string', pattern: '^[0-9a-f]+$' },
        cost: { type: 'integer', minimum: 1, description: 'PBKDF2 iterations per attempt.' },
        keyLength: { type: 'integer', minimum: 1 },
        keyPrefix: { type: 'string', pattern: '^[0-9a-f]+$', description: 'The derived key the solver looks for starts so.' },
        keySignature: { type: 'string', pattern: '^[0-9a-f]+$' },
        expiresAt: { type: 'integer', description: 'Seconds since the epoch after which a proof of it is invalid.' },
      },
    },
    signature: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'HMAC-SHA-256 of the parameters.' },
  },
} as const;

const tooMany = (_request: unknown, context: { after: string }) =>
  Object.assign(new Error(`Too many challenges asked for from this address; try again in ${context.after}.`), { statusCode: 429 });

export async function contactChallengeRoute(app: FastifyInstance, { proofOfWork, limit = CHALLENGE_RATE_LIMIT }: ContactChallengeOptions) {
  app.get(CHALLENGE_PATH, { config: { rateLimit: { ...limit, errorResponseBuilder: tooMany } } }, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send(await proofOfWork.challenge()),
  );
}

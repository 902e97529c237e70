// The contact page's proof of work on real stores: challenges signed with a key made once per
// database, proofs valid once, and anything else (expired, tampered, replayed, malformed) invalid
// without an exception; the spent proofs and the shared key on both backends, racing instances too.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  CHALLENGE_LIFETIME_MS,
  loadProofOfWork,
  MAX_PROOF_LENGTH,
  PROOF_ALGORITHM,
  PROOF_ATTEMPTS,
  PROOF_COST,
  type ProofOfWork,
} from '../../src/spam/proof-of-work.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { BACKENDS, freshSqlite, storePerTest } from '../helpers/databases.js';
import { encodeProof, solveProof } from '../helpers/proof.js';

describe('proofs of work', () => {
  const stores = storePerTest(freshSqlite);
  async function proofOfWork(now?: () => Date): Promise<{ proofs: ProofOfWork; store: Store }> {
    const { store } = await stores.open();
    return { proofs: await loadProofOfWork(store.proofs, now), store };
  }

  it('issues signed PBKDF2 challenges that expire after CHALLENGE_LIFETIME_MS, with an answer within PROOF_ATTEMPTS', async () => {
    const { proofs } = await proofOfWork();
    const challenge = await proofs.challenge();
    expect(challenge.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(challenge.parameters).toMatchObject({ algorithm: PROOF_ALGORITHM, cost: PROOF_COST, keyLength: 32 });
    expect((challenge.parameters.expiresAt ?? 0) * 1000 - Date.now()).toBeGreaterThan(CHALLENGE_LIFETIME_MS - 2_000);
    expect((challenge.parameters.expiresAt ?? 0) * 1000 - Date.now()).toBeLessThanOrEqual(CHALLENGE_LIFETIME_MS);
    const { solution } = await solveProof(challenge);
    expect(solution.counter).toBeGreaterThanOrEqual(PROOF_ATTEMPTS.min);
    expect(solution.counter).toBeLessThanOrEqual(PROOF_ATTEMPTS.max);
  });

  it('counts a valid, fresh proof once: valid, then invalid when sent again', async () => {
    const { proofs } = await proofOfWork();
    const { header } = await solveProof(await proofs.challenge());
    expect(await proofs.check(header)).toBe('valid');
    expect(await proofs.check(header)).toBe('invalid');
  });

  it('calls none sent missing', async () => {
    const { proofs } = await proofOfWork();
    expect(await proofs.check(undefined)).toBe('missing');
  });

  it('calls a proof of an expired challenge invalid', async () => {
    const { store } = await stores.open();
    const past = await loadProofOfWork(store.proofs, () => new Date(Date.now() - CHALLENGE_LIFETIME_MS - 1_000));
    const challenge = await past.challenge();
    const { header } = await solveProof(challenge);
    expect(await (await loadProofOfWork(store.proofs)).check(header)).toBe('invalid');
    // Nor was it spent: a proof that does not hold writes nothing.
    expect(await store.proofs.spend(String(challenge.signature), new Date(Date.now() + 60_000))).toBe(true);
  });

  it('calls a proof invalid when anything signed was changed, or its answer was', async () => {
    const { proofs } = await proofOfWork();
    const challenge = await proofs.challenge();
    const { solution } = await solveProof(challenge);
    const later = (challenge.parameters.expiresAt ?? 0) + 3600;
    const tampered = [
      { challenge: { ...challenge, parameters: { ...challenge.parameters, expiresAt: later } }, solution },
      { challenge: { ...challenge, parameters: { ...challenge.parameters, cost: 1 } }, solution },
      { challenge: { ...challenge, signature: challenge.signature?.replace(/^./, (c) => (c === '0' ? '1' : '0')) }, solution },
      { challenge, solution: { ...solution, derivedKey: solution.derivedKey.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } },
      { challenge, solution: { counter: solution.counter } },
    ];
    for (const proof of tampered) expect(await proofs.check(encodeProof(proof)), JSON.stringify(proof)).toBe('invalid');
    expect(await proofs.check(encodeProof({ challenge, solution }))).toBe('valid');
  });

  it("calls invalid a proof of another database's challenge (its key differs)", async () => {
    const { proofs } = await proofOfWork();
    const { proofs: elsewhere } = await proofOfWork();
    const { header } = await solveProof(await elsewhere.challenge());
    expect(await proofs.check(header)).toBe('invalid');
  });

  it('calls malformed headers invalid: not base64, not JSON, not the payload, too long', async () => {
    const { proofs } = await proofOfWork();
    const challenge = await proofs.challenge();
    const { header } = await solveProof(challenge);
    const malformed = [
      '',
      'not base64!',
      `${header}, ${header}`, // two Altcha headers, as Node joins them
      encodeProof('a string'),
      encodeProof(null),
      encodeProof([1, 2]),
      encodeProof({ challenge }),
      encodeProof({ challenge: { parameters: challenge.parameters }, solution: {} }),
      encodeProof({ challenge: { ...challenge, signature: 'ABC' }, solution: {} }),
      encodeProof({ challenge: { ...challenge, parameters: [] }, solution: {} }),
      Buffer.from('{"challenge":').toString('base64'),
      'A'.repeat(MAX_PROOF_LENGTH + 4),
    ];
    for (const value of malformed) expect(await proofs.check(value), value.slice(0, 80)).toBe('invalid');
    expect(await proofs.check(header)).toBe('valid');
  });

  it('never throws on any header value, nor on any JSON sent as the payload', async () => {
    const { proofs } = await proofOfWork();
    const challenge = await proofs.challenge();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 600 }), async (value) => {
        expect(await proofs.check(value)).toBe('invalid');
      }),
      { numRuns: 300 },
    );
    const payload = fc.record({
      challenge: fc.oneof(fc.jsonValue(), fc.record({ parameters: fc.jsonValue(), signature: fc.jsonValue() })),
      solution: fc.jsonValue(),
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(payload, fc.jsonValue()), async (value) => {
        expect(await proofs.check(encodeProof(value))).toBe('invalid');
      }),
      { numRuns: 300 },
    );
    // The same signed parameters with answers of any shape.
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (solution) => {
        expect(await proofs.check(encodeProof({ challenge, solution }))).toBe('invalid');
      }),
      { numRuns: 200 },
    );
  });

  it('calls a valid proof missing, neither for nor against, when the database cannot say whether it was used', async () => {
    const { proofs, store } = await proofOfWork();
    const { header } = await solveProof(await proofs.challenge());
    vi.spyOn(store.proofs, 'spend').mockRejectedValueOnce(new Error('the database is away'));
    expect(await proofs.check(header)).toBe('missing');
  });
});

describe.each(BACKENDS)('the proof store on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('spends a proof once, however many instances send it at the same moment', async () => {
    const { store, database } = await stores.open();
    const others = await Promise.all([1, 2, 3].map(async () => createStore(await openDatabase(database.config))));
    try {
      const until = new Date(Date.now() + 60_000);
      const spent = await Promise.all([store, ...others, store, ...others].map((instance) => instance.proofs.spend('proof-1', until)));
      expect(spent.filter(Boolean)).toHaveLength(1);
      expect(await store.proofs.spend('proof-2', until)).toBe(true);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });

  it('forgets spent proofs once their challenge has expired, and only those', async () => {
    const { store } = await stores.open();
    const now = new Date('2026-05-01T12:00:00Z');
    await store.proofs.spend('old', new Date(now.getTime() - 1));
    await store.proofs.spend('current', new Date(now.getTime() + 60_000));
    await store.proofs.purgeExpired(now);
    expect(await store.proofs.spend('old', new Date(now.getTime() + 60_000))).toBe(true);
    expect(await store.proofs.spend('current', new Date(now.getTime() + 60_000))).toBe(false);
  });

  it('makes one key for every instance, even when they start together on an empty database', async () => {
    const { database } = await stores.open();
    const instances = await Promise.all([1, 2, 3, 4].map(async () => createStore(await openDatabase(database.config))));
    try {
      const loaded = await Promise.all(instances.map((instance) => loadProofOfWork(instance.proofs)));
      const secrets = await Promise.all(instances.map((instance, i) => instance.proofs.secret('proof-of-work', `candidate-${i}`)));
      expect(new Set(secrets).size).toBe(1);
      expect(secrets[0]).not.toMatch(/^candidate-/);
      // What one instance issued, another verifies; and a replay at a third is seen.
      const { header } = await solveProof(await (loaded[0] as ProofOfWork).challenge());
      expect(await (loaded[1] as ProofOfWork).check(header)).toBe('valid');
      expect(await (loaded[2] as ProofOfWork).check(header)).toBe('invalid');
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it('keeps the key across restarts', async () => {
    const { store, database } = await stores.open();
    const { header } = await solveProof(await (await loadProofOfWork(store.proofs)).challenge());
    await store.close();
    const restarted = createStore(await openDatabase(database.config));
    try {
      expect(await (await loadProofOfWork(restarted.proofs)).check(header)).toBe('valid');
    } finally {
      await restarted.close();
    }
  });
});

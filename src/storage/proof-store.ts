// The proof of work's storage (ProofStore): its shared secret and the proofs used, held by primary
// keys, so that instances racing on the same secret or proof agree on one outcome.
import type { Executor } from './executor.js';
import type { ProofStore } from './ports.js';

export function createProofStore(q: Executor): ProofStore {
  return {
    async secret(name, candidate) {
      const stored = () => q().selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirst();
      // Read first: a start on a database that has it writes nothing (and needs no write lock).
      const found = await stored();
      if (found) return found.value;
      await q()
        .insertInto('service_secrets')
        .values({ name, value: candidate, created_at: Date.now() })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const row = await stored();
      if (!row) throw new Error(`the secret ${name} was neither found nor stored`);
      return row.value;
    },
    async spend(id, expiresAt) {
      const rows = await q()
        .insertInto('spent_proofs')
        .values({ id, expires_at: expiresAt.getTime() })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .execute();
      return rows.length === 1;
    },
    async purgeExpired(now) {
      await q().deleteFrom('spent_proofs').where('expires_at', '<', now.getTime()).execute();
    },
  };
}

// Shared set-up of the store tests (test/unit/store-*.test.ts): inquiries and agent registrations
// to store, a queue of inquiries with their deliveries, and an advisory lock held by a transaction.
import type { AgentClient, InquiryRecord, Store } from '../../src/storage/ports.js';

export const inquiry = (reference: string, receivedAt = new Date()): InquiryRecord => ({
  reference,
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: null,
  message: `message of ${reference}`,
  clientId: null,
  receivedAt,
  source: 'api',
});

/** An agent's registration: anonymous and active unless `fields` say otherwise. */
export const agentClient = (clientId: string, fields: Partial<AgentClient> = {}): AgentClient => ({
  clientId,
  clientName: 'An agent',
  clientUri: null,
  registrationType: 'anonymous',
  status: 'active',
  email: null,
  subject: null,
  issuer: null,
  createdAt: new Date(),
  ...fields,
});

/** Stores an inquiry per reference (received at `at`), each with a delivery per channel, in one transaction. */
export async function queueInquiries(store: Store, references: readonly string[], channels: readonly string[], at: Date): Promise<void> {
  await store.transaction(async (tx) => {
    await store.inquiries.insertMany(
      references.map((reference) => ({ inquiry: inquiry(reference, at), fingerprint: reference })),
      tx,
    );
    await store.outbox.enqueue(references, channels, at, tx);
  });
}

/**
 * Holds an advisory lock on `name` in a transaction of its own until released. It resolves once the
 * lock is held: a statement of that transaction has been answered (its `begin`, which takes the
 * lock, goes out without being waited for).
 */
export async function holdLock(store: Store, name: string): Promise<{ release: () => Promise<void> }> {
  let letGo = () => {};
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let holding = () => {};
  const locked = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const holder = store.transaction(
    async (tx) => {
      await store.inquiries.findByReference('INQ-HOLDER', tx);
      holding();
      await held;
    },
    { lock: [name] },
  );
  await Promise.race([locked, holder]);
  return {
    release: async () => {
      letGo();
      await holder;
    },
  };
}

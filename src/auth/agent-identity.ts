// Who sent an inquiry through an agent: the agent's name and, when a person proved an address
// behind it, that verified email. One lookup for every door that shows attribution (the webhook,
// the CLI, the mail).
import type { AgentClient, Store } from '../storage/ports.js';

export interface AgentIdentity {
  readonly clientId: string;
  /** The name the agent registered under (an OAuth sign-in's: its client's name). */
  readonly name: string;
  /**
   * The address its person proved: with a mailed code (an OAuth sign-in, a claim, a verified_email
   * registration once confirmed) or in a trusted issuer's ID-JAG. Null for an anonymous agent.
   */
  readonly verifiedEmail: string | null;
}

export type AgentIdentities = (clientId: string | null) => Promise<AgentIdentity | null>;

/** The identity of a client as stored; a pending registration's address is not proved yet. */
export function agentIdentityOf(client: Pick<AgentClient, 'clientId' | 'clientName' | 'status' | 'email'>): AgentIdentity {
  return {
    clientId: client.clientId,
    name: client.clientName,
    verifiedEmail: client.status === 'pending' ? null : client.email,
  };
}

/**
 * A person stands behind the agent (it was claimed): an address proved, or an ID-JAG from a trusted
 * issuer, which may carry no address. Its inquiries are not judged on content (docs/spam.md).
 */
export function personVerified(client: Pick<AgentClient, 'status' | 'registrationType' | 'email'>): boolean {
  return client.status !== 'pending' && (client.registrationType === 'id-jag' || client.email !== null);
}

/** Looks up the agent behind an inquiry's client id; null for none, or one no longer on file (erased). */
export function agentIdentities(store: Pick<Store, 'auth'>): AgentIdentities {
  return async (clientId) => {
    if (clientId === null) return null;
    const client = await store.auth.findClient(clientId);
    return client === undefined ? null : agentIdentityOf(client);
  };
}

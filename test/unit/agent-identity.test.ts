// The agent behind an inquiry as every door shows it: its name, and its person's address only once proved.
import { describe, expect, it } from 'vitest';
import { agentIdentityOf } from '../../src/auth/agent-identity.js';

describe('agentIdentityOf', () => {
  const client = { clientId: 'agt_1', clientName: 'Desk agent', email: 'person@example.com' };
  it.each([
    ['active', 'person@example.com'],
    ['revoked', 'person@example.com'],
    ['pending', null],
  ] as const)('a %s client with an address: verifiedEmail %s', (status, verifiedEmail) => {
    expect(agentIdentityOf({ ...client, status })).toEqual({ clientId: 'agt_1', name: 'Desk agent', verifiedEmail });
  });
  it('an anonymous agent has a name and no address', () => {
    expect(agentIdentityOf({ ...client, status: 'active', email: null })).toEqual({
      clientId: 'agt_1',
      name: 'Desk agent',
      verifiedEmail: null,
    });
  });
});

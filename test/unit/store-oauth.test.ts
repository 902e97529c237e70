// The sign-in flow's storage on each backend: single use of codes and refresh tokens by conditional
// writes, family revocation, and retention of what has served.
import { describe, expect, it } from 'vitest';
import type { Authorization, Store } from '../../src/storage/ports.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';
import { agentClient } from '../helpers/store-fixtures.js';

const at = new Date('2026-03-01T00:00:00Z');
const later = (ms: number) => new Date(at.getTime() + ms);
const DAY = 24 * 60 * 60 * 1000;

const authorization = (id: string, expiresAt: Date): Authorization => ({
  id,
  clientId: 'mcp_one',
  redirectUri: 'http://127.0.0.1:1/cb',
  codeChallenge: 'c'.repeat(43),
  resource: 'https://studio.example/',
  scope: 'inquiry:write',
  state: null,
  csrfHash: 'a'.repeat(64),
  status: 'approved',
  email: null,
  otpHash: null,
  otpExpiresAt: null,
  failedAttempts: 0,
  codeHash: `code-${id}`,
  grantId: 'agt_grant',
  expiresAt,
  createdAt: at,
});

const refreshToken = (tokenHash: string, expiresAt: Date) =>
  ({
    tokenHash,
    grantId: 'agt_grant',
    clientId: 'mcp_one',
    resource: 'https://studio.example/',
    scope: 'inquiry:write',
    status: 'active',
    expiresAt,
    createdAt: at,
  }) as const;

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  let store: Store;

  it('redeems a code once and rotates a refresh token once; revoking the family ends the rest', async () => {
    ({ store } = await stores.open());
    await store.oauth.createAuthorization(authorization('a1', later(DAY)));
    expect((await store.oauth.findAuthorizationByCode('code-a1'))?.status).toBe('approved');
    const redeem = () => store.oauth.updateAuthorization('a1', { status: 'redeemed' }, ['approved']);
    expect(await Promise.all([redeem(), redeem()])).toEqual(expect.arrayContaining([true, false]));

    await store.oauth.createRefreshToken(refreshToken('r1', later(DAY)));
    await store.oauth.createRefreshToken(refreshToken('r2', later(DAY)));
    expect(await store.oauth.useRefreshToken('r1')).toBe(true);
    expect(await store.oauth.useRefreshToken('r1')).toBe(false);
    await store.oauth.revokeRefreshTokens('agt_grant');
    expect((await store.oauth.findRefreshToken('r2'))?.status).toBe('revoked');
    expect(await store.oauth.useRefreshToken('r2')).toBe(false);
  });

  it('retention deletes expired sign-ins and tokens, unused clients and grants left without tokens', async () => {
    ({ store } = await stores.open());
    await store.oauth.createAuthorization(authorization('old', later(-2 * DAY)));
    await store.oauth.createAuthorization(authorization('new', later(DAY)));
    await store.oauth.createRefreshToken(refreshToken('old', later(-2 * DAY)));
    await store.oauth.createClient({
      clientId: 'mcp_unused',
      clientName: 'x',
      clientUri: null,
      redirectUris: ['https://a.example/cb'],
      createdAt: later(-2 * DAY),
      lastUsedAt: null,
    });
    await store.oauth.createClient({
      clientId: 'mcp_used',
      clientName: 'x',
      clientUri: null,
      redirectUris: ['https://a.example/cb'],
      createdAt: later(-2 * DAY),
      lastUsedAt: at,
    });
    await store.auth.createClient(
      agentClient('agt_grant', { clientName: 'x', registrationType: 'oauth', email: 'p@example.com', createdAt: later(-2 * DAY) }),
    );
    const cutoffs = { expiredBefore: later(-DAY), unusedClientBefore: later(-DAY), idleClientBefore: later(-10 * DAY) };
    const batch = await store.retention.deleteSpentSignIns(cutoffs, 100);
    expect(batch.deleted).toEqual({ authorizations: 1, refreshTokens: 1, oauthClients: 1, clients: 1 });
    expect(await store.oauth.findAuthorization('new')).toBeDefined();
    expect(await store.oauth.findClient('mcp_used')).toBeDefined();
    expect(await store.auth.findClient('agt_grant')).toBeUndefined();
  });
});

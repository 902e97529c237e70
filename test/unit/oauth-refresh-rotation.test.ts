// Refresh-token rotation on each backend: the used mark and the successor are written together, and
// of two concurrent uses of one refresh token one wins and the other, a reuse, ends the whole sign-in.
import { describe, expect, it, vi } from 'vitest';
import { sha256 } from '../../src/auth/authorization.js';
import { SigningKeys } from '../../src/auth/keys.js';
import { createOAuthTokens } from '../../src/auth/oauth-tokens.js';
import { authUrls } from '../../src/auth/urls.js';
import type { Store } from '../../src/storage/ports.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';

const urls = authUrls('https://studio.example');
const DAY = 24 * 60 * 60 * 1000;
const TOKEN = `rt_${'a'.repeat(43)}`;

async function signedIn(store: Store) {
  const now = new Date();
  await store.auth.createClient({
    clientId: 'agt_grant',
    clientName: 'Desk agent',
    clientUri: null,
    registrationType: 'oauth',
    status: 'active',
    email: 'person@example.com',
    subject: null,
    issuer: null,
    createdAt: now,
  });
  await store.oauth.createRefreshToken({
    tokenHash: sha256(TOKEN),
    grantId: 'agt_grant',
    clientId: 'mcp_one',
    resource: urls.mcpVerifiedResource,
    scope: 'inquiry:write',
    status: 'active',
    expiresAt: new Date(now.getTime() + DAY),
    createdAt: now,
  });
  const keys = await SigningKeys.load(store);
  return createOAuthTokens({ store, keys, urls, now: () => new Date() });
}

const refresh = { grant_type: 'refresh_token', refresh_token: TOKEN, client_id: 'mcp_one' };

describe.each(BACKENDS)('on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('two concurrent uses of one refresh token: one gets tokens, the other revokes the family', async () => {
    const { store } = await stores.open();
    const tokens = await signedIn(store);
    const settled = await Promise.allSettled([tokens.token(refresh), tokens.token(refresh)]);
    const won = settled.filter((one) => one.status === 'fulfilled');
    const lost = settled.filter((one) => one.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_grant' });
    // The winner's new refresh token went with the family, and the grant every access token names.
    const successor = (won[0] as PromiseFulfilledResult<{ refresh_token: string }>).value.refresh_token;
    expect((await store.oauth.findRefreshToken(sha256(successor)))?.status).toBe('revoked');
    expect((await store.auth.findClient('agt_grant'))?.status).toBe('revoked');
    await expect(tokens.token({ ...refresh, refresh_token: successor })).rejects.toMatchObject({ code: 'invalid_grant' });
  });

  it('rotates: the used token and its successor are written together, or neither', async () => {
    const { store } = await stores.open();
    const tokens = await signedIn(store);
    const failing = vi.spyOn(store.oauth, 'createRefreshToken').mockRejectedValueOnce(new Error('the disk is full'));
    await expect(tokens.token(refresh)).rejects.toThrow('the disk is full');
    // Rolled back: the token was not spent, so the client may simply try again.
    expect((await store.oauth.findRefreshToken(sha256(TOKEN)))?.status).toBe('active');
    failing.mockRestore();
    const next = (await tokens.token(refresh)) as { refresh_token: string };
    expect((await store.oauth.findRefreshToken(sha256(TOKEN)))?.status).toBe('used');
    expect((await store.oauth.findRefreshToken(sha256(next.refresh_token)))?.status).toBe('active');
  });
});

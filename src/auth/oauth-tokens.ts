// POST /oauth/token's grants of the sign-in flow: authorization_code (RFC 6749 §4.1.3 with PKCE,
// RFC 7636 §4.6) and refresh_token (§6), rotated on every use; a refresh token or code that comes
// back after its use revokes the grant it belongs to (RFC 9700 §2.2.2, §4.14).
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { RefreshToken, Store } from '../storage/ports.js';
import { sha256 } from './authorization.js';
import { OAuthError } from './errors.js';
import type { SigningKeys } from './keys.js';
import { resourceNamed } from './resources.js';
import { ACCESS_TOKEN_TTL_SECONDS, ACCESS_TOKEN_TYP } from './service.js';
import type { AuthUrls } from './urls.js';

export const GRANT_TYPE_AUTHORIZATION_CODE = 'authorization_code';
export const GRANT_TYPE_REFRESH_TOKEN = 'refresh_token';
/** A sign-in lasts as long as its refresh tokens are used at least this often. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const REFRESH_TOKEN_PREFIX = 'rt_';
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface OAuthTokensDeps {
  readonly store: Pick<Store, 'auth' | 'oauth' | 'transaction'>;
  readonly keys: SigningKeys;
  readonly urls: AuthUrls;
  readonly now: () => Date;
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;

export function createOAuthTokens({ store, keys, urls, now }: OAuthTokensDeps) {
  const required = (params: Record<string, string | undefined>, name: string): string => {
    const value = params[name];
    if (!value) throw new OAuthError('invalid_request', `${name} is required`);
    return value;
  };

  /** Ends a grant: its agent client (every access token names it) and its refresh tokens. */
  async function revokeGrant(grantId: string): Promise<void> {
    await store.auth.revokeClient(grantId, now());
    await store.oauth.revokeRefreshTokens(grantId);
  }

  function checkResource(bound: string, requested: string | undefined): void {
    if (requested !== undefined && resourceNamed(urls, requested) !== bound) {
      throw new OAuthError('invalid_target', `this grant is for the resource ${bound}`);
    }
  }

  async function authorizationCode(params: Record<string, string | undefined>) {
    const [code, clientId, redirectUri, verifier] = ['code', 'client_id', 'redirect_uri', 'code_verifier'].map((name) =>
      required(params, name),
    );
    const a = await store.oauth.findAuthorizationByCode(sha256(code as string));
    if (!a?.grantId) throw new OAuthError('invalid_grant', 'unknown authorization code');
    if (a.status === 'redeemed') {
      await revokeGrant(a.grantId);
      throw new OAuthError('invalid_grant', 'the authorization code was used before: the tokens issued for it are revoked');
    }
    if (a.status !== 'approved' || a.expiresAt.getTime() <= now().getTime())
      throw new OAuthError('invalid_grant', 'the authorization code has expired');
    if (a.clientId !== clientId) throw new OAuthError('invalid_grant', 'the authorization code was issued to another client');
    if (a.redirectUri !== redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri is not the one the code was issued for');
    if (!pkceMatches(verifier as string, a.codeChallenge))
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    checkResource(a.resource, params.resource);
    const issued = await mint(a.grantId, a.clientId, a.resource, a.scope);
    // The conditional write is the single use: of two requests with one code, one gets the tokens.
    // The code is spent and its refresh token stored together, or neither is.
    const redeemed = await store.transaction(async (tx) => {
      if (!(await store.oauth.updateAuthorization(a.id, { status: 'redeemed' }, ['approved'], tx))) return false;
      await store.oauth.createRefreshToken(issued.record, tx);
      return true;
    });
    if (!redeemed) {
      await revokeGrant(a.grantId);
      throw new OAuthError('invalid_grant', 'the authorization code was used before: the tokens issued for it are revoked');
    }
    return issued.response;
  }

  async function refresh(params: Record<string, string | undefined>) {
    const [token, clientId] = ['refresh_token', 'client_id'].map((name) => required(params, name));
    const held = await store.oauth.findRefreshToken(sha256(token as string));
    if (!held || held.clientId !== clientId) throw new OAuthError('invalid_grant', 'unknown refresh token');
    if (held.status === 'used') {
      await revokeGrant(held.grantId);
      throw new OAuthError('invalid_grant', 'the refresh token was used before: the sign-in is revoked, sign in again');
    }
    if (held.status === 'revoked' || held.expiresAt.getTime() <= now().getTime()) {
      throw new OAuthError('invalid_grant', 'the refresh token has expired or been revoked: sign in again');
    }
    checkResource(held.resource, params.resource);
    const scope = params.scope?.trim();
    if (scope?.split(/\s+/).some((one) => !held.scope.split(' ').includes(one))) {
      throw new OAuthError('invalid_scope', `this grant has the scope ${held.scope}`);
    }
    const issued = await mint(held.grantId, held.clientId, held.resource, held.scope);
    // Rotation (RFC 9700 §4.14.2) in one transaction: the token marked used and its successor stored.
    // Of two concurrent uses one marks it; the other finds it used, a reuse, and ends the sign-in.
    const rotated = await store.transaction(async (tx) => {
      if (!(await store.oauth.useRefreshToken(held.tokenHash, tx))) return false;
      await store.oauth.createRefreshToken(issued.record, tx);
      return true;
    });
    if (!rotated) {
      await revokeGrant(held.grantId);
      throw new OAuthError('invalid_grant', 'the refresh token was used before: the sign-in is revoked, sign in again');
    }
    return issued.response;
  }

  /** An access token naming the grant (`sub`) and its verified email, and the next refresh token (stored by the caller). */
  async function mint(grantId: string, clientId: string, resource: string, scope: string) {
    const grant = await store.auth.findClient(grantId);
    if (grant?.status !== 'active' || grant.email === null) throw new OAuthError('invalid_grant', 'the sign-in has been revoked');
    const issuedAt = now();
    const accessToken = await keys.sign(
      { iss: urls.issuer, aud: resource, sub: grantId, client_id: clientId, scope, email: grant.email, jti: randomUUID() },
      { typ: ACCESS_TOKEN_TYP, expiresInSeconds: ACCESS_TOKEN_TTL_SECONDS, now: issuedAt },
    );
    const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record: RefreshToken = {
      tokenHash: sha256(refreshToken),
      grantId,
      clientId,
      resource,
      scope,
      status: 'active',
      expiresAt: new Date(issuedAt.getTime() + REFRESH_TOKEN_TTL_MS),
      createdAt: issuedAt,
    };
    const response = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope,
      refresh_token: refreshToken,
    };
    return { response, record };
  }

  /** POST /oauth/token for the two grants of the sign-in flow. */
  function token(params: Record<string, string | undefined>) {
    return params.grant_type === GRANT_TYPE_AUTHORIZATION_CODE ? authorizationCode(params) : refresh(params);
  }

  /** RFC 7009 for a refresh token: the whole grant ends. False for any other token (not one of these). */
  async function revoke(token: string): Promise<boolean> {
    if (!token.startsWith(REFRESH_TOKEN_PREFIX)) return false;
    const held = await store.oauth.findRefreshToken(sha256(token));
    if (held) await revokeGrant(held.grantId);
    return true;
  }

  return {
    token,
    revoke,
    handles: (grantType: string | undefined) => grantType === GRANT_TYPE_AUTHORIZATION_CODE || grantType === GRANT_TYPE_REFRESH_TOKEN,
  };
}

/** RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) == code_challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

// The storage port of the MCP authorization flow (ports.ts re-exports it): registered clients,
// sign-ins and their codes, refresh tokens. Types only, importing nothing but the transaction's port.
import type { Tx } from './ports-tx.js';

/** A client registered by RFC 7591 (Client ID Metadata Documents are fetched, never stored). */
export interface OAuthClient {
  readonly clientId: string;
  readonly clientName: string;
  readonly clientUri: string | null;
  readonly redirectUris: readonly string[];
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/**
 * pending: consent page shown; code_sent: a code mailed to `email`; approved: an authorization code
 * issued; redeemed: the code exchanged; denied / ended: refused by the person, or too many wrong codes.
 */
export type AuthorizationStatus = 'pending' | 'code_sent' | 'approved' | 'redeemed' | 'denied' | 'ended';

export interface Authorization {
  readonly id: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scope: string;
  readonly state: string | null;
  readonly csrfHash: string;
  readonly status: AuthorizationStatus;
  readonly email: string | null;
  readonly otpHash: string | null;
  readonly otpExpiresAt: Date | null;
  readonly failedAttempts: number;
  readonly codeHash: string | null;
  /** The grant (an agent client holding the verified email) made at approval. */
  readonly grantId: string | null;
  /** Of the consent while pending, of the authorization code once approved. */
  readonly expiresAt: Date;
  readonly createdAt: Date;
}

export type AuthorizationChanges = Partial<
  Pick<Authorization, 'status' | 'email' | 'otpHash' | 'otpExpiresAt' | 'codeHash' | 'grantId' | 'expiresAt'>
>;

/** active: may be exchanged once; used: exchanged (coming back, it revokes its family); revoked. */
export type RefreshTokenStatus = 'active' | 'used' | 'revoked';

export interface RefreshToken {
  readonly tokenHash: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly resource: string;
  readonly scope: string;
  readonly status: RefreshTokenStatus;
  readonly expiresAt: Date;
  readonly createdAt: Date;
}

export interface OAuthStore {
  createClient(client: OAuthClient): Promise<void>;
  findClient(clientId: string): Promise<OAuthClient | undefined>;
  markClientUsed(clientId: string, at: Date, tx?: Tx): Promise<void>;
  createAuthorization(authorization: Authorization): Promise<void>;
  findAuthorization(id: string, tx?: Tx): Promise<Authorization | undefined>;
  findAuthorizationByCode(codeHash: string): Promise<Authorization | undefined>;
  /** Changes the sign-in if its status is still one of `expected`; false, and nothing written, where not. */
  updateAuthorization(id: string, changes: AuthorizationChanges, expected: readonly AuthorizationStatus[], tx?: Tx): Promise<boolean>;
  /** Counts a wrong-or-right code attempt while a code is out and tries are left; the new count, or null. */
  countAuthorizationAttempt(id: string, maxAttempts: number, tx?: Tx): Promise<number | null>;
  createRefreshToken(token: RefreshToken, tx?: Tx): Promise<void>;
  findRefreshToken(tokenHash: string): Promise<RefreshToken | undefined>;
  /** Marks an active token used (rotation); false where it was not active any more (a reuse or a race). */
  useRefreshToken(tokenHash: string, tx?: Tx): Promise<boolean>;
  /** Revokes every refresh token of the grant. */
  revokeRefreshTokens(grantId: string, tx?: Tx): Promise<void>;
}

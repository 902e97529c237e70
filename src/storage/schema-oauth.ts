// Table shapes of the MCP authorization flow (migrations 027-029), as Kysely sees them.
import type { Generated } from 'kysely';
import type { AuthorizationStatus, RefreshTokenStatus } from './ports-oauth.js';

export interface OAuthClientsTable {
  client_id: string;
  client_name: string;
  client_uri: string | null;
  /** JSON array of the exact redirect URIs registered. */
  redirect_uris: string;
  created_at: number;
  /** When a person last approved a sign-in of this client; null while never. */
  last_used_at: number | null;
}

export interface OAuthAuthorizationsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scope: string;
  state: string | null;
  csrf_hash: string;
  status: AuthorizationStatus;
  email: string | null;
  otp_hash: string | null;
  otp_expires_at: number | null;
  failed_attempts: Generated<number>;
  code_hash: string | null;
  grant_id: string | null;
  expires_at: number;
  created_at: number;
}

export interface OAuthRefreshTokensTable {
  token_hash: string;
  grant_id: string;
  client_id: string;
  resource: string;
  scope: string;
  status: RefreshTokenStatus;
  expires_at: number;
  created_at: number;
}

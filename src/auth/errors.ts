// Errors of the agent-auth endpoints. OAuthError renders as RFC 6749 §5.2 JSON on /oauth/*;
// AgentAuthError as problem+json with an OAuth-style `error` code on /agent/* (docs/api.md "Errors").

/**
 * RFC 6749 §5.2 (plus RFC 8707 §2 invalid_target, RFC 7009 §2.2.1 unsupported_token_type, RFC 7591
 * §3.2.2 invalid_redirect_uri and invalid_client_metadata, RFC 6585 rate_limited as a 429).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'unauthorized_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_client'
  | 'unsupported_token_type';

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export type AgentAuthErrorCode =
  | 'invalid_request'
  | 'invalid_claim_token'
  | 'otp_invalid'
  | 'claim_expired'
  | 'previously_claimed'
  | 'unsupported_identity_type'
  | 'unsupported_assertion_type'
  | 'invalid_assertion'
  | 'issuer_not_enabled'
  | 'replay_detected'
  | 'rate_limited';

export class AgentAuthError extends Error {
  constructor(
    readonly code: AgentAuthErrorCode,
    message: string,
    readonly status = 400,
    /** For a 429: when to ask again (RFC 9110 §10.2.3 Retry-After), in whole seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AgentAuthError';
  }
}

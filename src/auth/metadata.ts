// The discovery documents (docs/agent-auth.md): OAuth protected resource metadata (RFC 9728) and
// authorization server metadata (RFC 8414) with the `agent_auth` block of the auth.md proposal.
// All built from AuthUrls.
import type { Config } from '../config.js';
import type { StudioProfile } from '../studio/profile.js';
import type { AuthUrls } from './urls.js';

export const INQUIRY_WRITE_SCOPE = 'inquiry:write';
export const SCOPES_SUPPORTED = [INQUIRY_WRITE_SCOPE] as const;

export const GRANT_TYPE_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const GRANT_TYPE_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';
export const TOKEN_TYPE_ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
export const GRANT_PROFILE_ID_JAG = 'urn:ietf:params:oauth:grant-profile:id-jag';

/** The protected resources: the HTTP API, the open MCP endpoint, the MCP endpoint that requires sign-in. */
export type ResourceName = 'api' | 'mcp' | 'mcp-verified';

/** RFC 9728 §2, for the resource B/, B/mcp or B/mcp/verified. */
export function protectedResourceMetadata(urls: AuthUrls, profile: StudioProfile, resource: ResourceName) {
  const described = {
    api: { uri: urls.resource, name: `${profile.name} inquiries` },
    mcp: { uri: urls.mcpResource, name: `${profile.name} inquiry tools (MCP)` },
    'mcp-verified': { uri: urls.mcpVerifiedResource, name: `${profile.name} inquiry tools for signed-in people (MCP)` },
  }[resource];
  return {
    resource: described.uri,
    authorization_servers: [urls.issuer],
    scopes_supported: [...SCOPES_SUPPORTED],
    bearer_methods_supported: ['header'],
    resource_name: described.name,
    resource_documentation: urls.authMd,
  };
}

/** What this deployment can do beyond anonymous registration, from its configuration. */
export interface AuthFeatures {
  /** SMTP is configured: verified_email registration and claims (a code is mailed). */
  readonly emailEnabled: boolean;
  /** TRUSTED_ISSUERS names at least one issuer: an ID-JAG can be redeemed (/auth.md says whether). */
  readonly idJagEnabled: boolean;
  /** SERVICE_MAIL_LIMIT, which /auth.md states (its default where not given). */
  readonly serviceMailPerHour?: number;
}

export const authFeatures = (config: Pick<Config, 'smtp' | 'trustedIssuers' | 'serviceMailLimit'>): AuthFeatures => ({
  emailEnabled: config.smtp !== null,
  idJagEnabled: Object.keys(config.trustedIssuers).length > 0,
  serviceMailPerHour: config.serviceMailLimit,
});

/**
 * RFC 8414 §2. The authorization-code flow (a person signs in with a mailed code) only where mail
 * can be sent; no empty array (§3.2). Both identity types
 * and ID-JAG are always offered (an untrusted issuer is refused when redeemed); verified_email only
 * where a code can be mailed. `claim_uri` stays: scanners count a method complete with it.
 */
export function authorizationServerMetadata(urls: AuthUrls, { emailEnabled }: Pick<AuthFeatures, 'emailEnabled'>) {
  const credentialTypes = [TOKEN_TYPE_JWT];
  const assertionTypes = [TOKEN_TYPE_ID_JAG, ...(emailEnabled ? ['verified_email'] : [])];
  const signIn = emailEnabled && {
    authorization_endpoint: urls.authorizationEndpoint,
    registration_endpoint: urls.registrationEndpoint,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
  const signInGrants = emailEnabled ? ['authorization_code', 'refresh_token'] : [];
  return {
    issuer: urls.issuer,
    ...signIn,
    token_endpoint: urls.tokenEndpoint,
    jwks_uri: urls.jwksUri,
    revocation_endpoint: urls.revocationEndpoint,
    grant_types_supported: [...signInGrants, GRANT_TYPE_JWT_BEARER, GRANT_TYPE_TOKEN_EXCHANGE],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...SCOPES_SUPPORTED],
    authorization_grant_profiles_supported: [GRANT_PROFILE_ID_JAG],
    service_documentation: urls.authMd,
    agent_auth: {
      skill: urls.authMd,
      register_uri: urls.registerUri,
      identity_endpoint: urls.registerUri,
      claim_uri: urls.claimUri,
      claim_endpoint: urls.claimUri,
      revocation_uri: urls.revocationEndpoint,
      identity_types_supported: ['anonymous', 'identity_assertion'],
      anonymous: { credential_types_supported: credentialTypes },
      identity_assertion: { assertion_types_supported: assertionTypes, credential_types_supported: credentialTypes },
    },
  };
}

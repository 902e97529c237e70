// The discovery side of the OpenAPI document: RFC 9728 protected resource metadata (for the API
// and the MCP server), RFC 8414 authorization server metadata with the auth.md `agent_auth` block (also served
// as OpenID discovery) and the JWKS. Examples are the documents this configuration really serves.
import { authFeatures, authorizationServerMetadata, protectedResourceMetadata } from '../auth/metadata.js';
import type { AuthUrls } from '../auth/urls.js';
import { API_CATALOG_PATH, API_CATALOG_PROFILE, agentLinks, apiCatalog, apiCatalogLinkHeader } from '../web/agent-links.js';
import { type Area, type AreaContext, example, JSON_TYPE, type Json, PUBLIC_HEADERS, ref } from './common.js';

const uri = { type: 'string', format: 'uri' } as const;
const strings = { type: 'array', minItems: 1, items: { type: 'string' } } as const;

const protectedResourceSchema = (urls: AuthUrls) => ({
  type: 'object',
  description: 'RFC 9728 §2. Unknown members are to be ignored by clients.',
  required: ['resource', 'authorization_servers', 'scopes_supported', 'bearer_methods_supported'],
  properties: {
    resource: { ...uri, description: `The resource identifier: ${urls.resource}, ${urls.mcpResource} or ${urls.mcpVerifiedResource}.` },
    authorization_servers: { type: 'array', minItems: 1, items: uri },
    scopes_supported: { ...strings, contains: { const: 'inquiry:write' } },
    bearer_methods_supported: { type: 'array', items: { const: 'header' }, minItems: 1 },
    resource_name: { type: 'string' },
    resource_documentation: uri,
  },
});

const agentAuthSchema = {
  type: 'object',
  description:
    'The `agent_auth` block of the auth.md agentic-registration proposal (with the later endpoint names as aliases). ' +
    'Both identity types of the interface are offered in every deployment; which assertion types, `identity_assertion` says.',
  required: ['skill', 'register_uri', 'claim_uri', 'revocation_uri', 'identity_types_supported', 'anonymous', 'identity_assertion'],
  properties: {
    skill: { ...uri, description: 'Where auth.md is.' },
    register_uri: uri,
    identity_endpoint: uri,
    claim_uri: uri,
    claim_endpoint: uri,
    revocation_uri: uri,
    identity_types_supported: {
      type: 'array',
      items: { enum: ['anonymous', 'identity_assertion'] },
      allOf: [{ contains: { const: 'anonymous' } }, { contains: { const: 'identity_assertion' } }],
    },
    anonymous: { type: 'object', required: ['credential_types_supported'], properties: { credential_types_supported: strings } },
    identity_assertion: {
      type: 'object',
      required: ['assertion_types_supported', 'credential_types_supported'],
      properties: {
        assertion_types_supported: {
          type: 'array',
          minItems: 1,
          items: { enum: ['urn:ietf:params:oauth:token-type:id-jag', 'verified_email'] },
          contains: { const: 'urn:ietf:params:oauth:token-type:id-jag' },
          description:
            'The id-jag type always (an ID-JAG whose issuer is not in TRUSTED_ISSUERS is refused: `issuer_not_enabled` at registration, `invalid_grant` at the token endpoint); `verified_email` only where the service can send email (SMTP_URL is set).',
        },
        credential_types_supported: strings,
      },
    },
  },
} as const;

const authorizationServerSchema = (urls: AuthUrls) => ({
  type: 'object',
  description:
    'RFC 8414 §2: only what exists is advertised and no array is empty. The authorization-code flow (authorization and ' +
    'registration endpoints, `authorization_code` and `refresh_token` grants) only where SMTP_URL is set.',
  required: ['issuer', 'token_endpoint', 'jwks_uri', 'revocation_endpoint', 'grant_types_supported', 'agent_auth'],
  properties: {
    issuer: { ...uri, description: `This service: ${urls.issuer} (PUBLIC_URL without a trailing slash).` },
    authorization_endpoint: uri,
    registration_endpoint: uri,
    response_types_supported: { type: 'array', items: { const: 'code' } },
    response_modes_supported: { type: 'array', items: { const: 'query' } },
    code_challenge_methods_supported: { type: 'array', items: { const: 'S256' } },
    client_id_metadata_document_supported: { type: 'boolean' },
    authorization_response_iss_parameter_supported: { type: 'boolean' },
    token_endpoint: uri,
    jwks_uri: uri,
    revocation_endpoint: uri,
    grant_types_supported: strings,
    token_endpoint_auth_methods_supported: strings,
    revocation_endpoint_auth_methods_supported: strings,
    scopes_supported: strings,
    authorization_grant_profiles_supported: strings,
    service_documentation: uri,
    agent_auth: ref('AgentAuth'),
  },
});

const jwksSchema = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      description: 'The public ES256 keys; several during a rotation. `kid` is the RFC 7638 thumbprint.',
      items: {
        type: 'object',
        required: ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'],
        properties: {
          kty: { const: 'EC' },
          crv: { const: 'P-256' },
          x: { type: 'string' },
          y: { type: 'string' },
          kid: { type: 'string' },
          alg: { const: 'ES256' },
          use: { const: 'sig' },
        },
      },
    },
  },
} as const;

const EXAMPLE_JWKS = {
  keys: [
    {
      kty: 'EC',
      crv: 'P-256',
      x: 'eMaa3N1SNczME7U4yNGd69VfJfE8TF63xQyuqpC_FP4',
      y: 'EvWucFjZmOmDuN_9e7cOm1t7KMtiBZei2k8tT5Ioxn0',
      kid: 'S2eF3WuOjoKxoe6DBYs2H_7UgBHTfx9IetNDezigMQw',
      alg: 'ES256',
      use: 'sig',
    },
  ],
};

const linkTargetSchema = {
  type: 'object',
  required: ['href'],
  properties: { href: uri, type: { type: 'string', description: 'The media type a GET of href answers with.' }, title: { type: 'string' } },
} as const;

const apiCatalogSchema = {
  type: 'object',
  description:
    'RFC 9727 API catalog in the RFC 9264 JSON linkset format: one context per API (the HTTP API and the MCP server), ' +
    'anchored at its address, with its description (`service-desc`), documentation (`service-doc`), metadata (`service-meta`) and status.',
  required: ['linkset'],
  properties: {
    linkset: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['anchor'],
        properties: { anchor: uri },
        additionalProperties: { type: 'array', minItems: 1, items: ref('LinkTarget') },
      },
    },
  },
} as const;

/** GET /.well-known/api-catalog: its own media type, and the Link header RFC 9727 §2 asks of it. */
function apiCatalogGet(publicUrl: string): Json {
  const links = agentLinks(publicUrl);
  return {
    get: {
      operationId: 'getApiCatalog',
      summary: 'API catalog (RFC 9727)',
      description:
        'Where the APIs of this service are described: the OpenAPI document, the API reference, auth.md, llms.txt, the MCP server card ' +
        'and the protected resource metadata. HEAD answers the same headers. Public, readable from any origin, cacheable for an hour.',
      tags: ['Discovery'],
      responses: {
        200: {
          description: 'The catalog.',
          headers: {
            ...PUBLIC_HEADERS,
            Link: {
              description: 'The catalog itself, with the api-catalog relation.',
              schema: { type: 'string', const: apiCatalogLinkHeader(links) },
            },
          },
          content: {
            'application/linkset+json': {
              schema: ref('ApiCatalog'),
              examples: { served: example(`As this service serves it (profile="${API_CATALOG_PROFILE}")`, apiCatalog(links)) },
            },
          },
        },
      },
    },
  };
}

function discoveryGet(operationId: string, summary: string, description: string, schema: string, value: unknown): Json {
  return {
    get: {
      operationId,
      summary,
      description: `${description} Public, readable from any origin, cacheable for an hour.`,
      tags: ['Discovery'],
      responses: {
        200: {
          description: summary,
          headers: PUBLIC_HEADERS,
          content: { [JSON_TYPE]: { schema: ref(schema), examples: { served: example('As this service serves it', value) } } },
        },
      },
    },
  };
}

export function discoveryArea({ config, profile, urls }: AreaContext): Area {
  const asMetadata = authorizationServerMetadata(urls, authFeatures(config));
  return {
    paths: {
      [API_CATALOG_PATH]: apiCatalogGet(config.publicUrl),
      '/.well-known/oauth-protected-resource': discoveryGet(
        'getProtectedResourceMetadata',
        'Protected resource metadata (the inquiry API)',
        `RFC 9728 metadata of the resource ${urls.resource} (POST /api/contact): which authorization server issues its tokens and how to send them.`,
        'ProtectedResourceMetadata',
        protectedResourceMetadata(urls, profile, 'api'),
      ),
      '/.well-known/oauth-protected-resource/mcp': discoveryGet(
        'getMcpProtectedResourceMetadata',
        'Protected resource metadata (the MCP server)',
        `RFC 9728 metadata of the resource ${urls.mcpResource} (the MCP tool server).`,
        'ProtectedResourceMetadata',
        protectedResourceMetadata(urls, profile, 'mcp'),
      ),
      '/.well-known/oauth-protected-resource/mcp/verified': discoveryGet(
        'getMcpVerifiedProtectedResourceMetadata',
        'Protected resource metadata (the MCP server for signed-in people)',
        `RFC 9728 metadata of the resource ${urls.mcpVerifiedResource}, named by its 401: sign a person in with OAuth to call it.`,
        'ProtectedResourceMetadata',
        protectedResourceMetadata(urls, profile, 'mcp-verified'),
      ),
      '/.well-known/oauth-authorization-server': discoveryGet(
        'getAuthorizationServerMetadata',
        'Authorization server metadata',
        'RFC 8414 metadata with the `agent_auth` block: where to register an agent, claim it, get and revoke tokens.',
        'AuthorizationServerMetadata',
        asMetadata,
      ),
      '/.well-known/jwks.json': discoveryGet(
        'getJwks',
        'Signing keys (JWKS)',
        'The public keys that verify identity assertions and access tokens issued by this service.',
        'JsonWebKeySet',
        EXAMPLE_JWKS,
      ),
    },
    schemas: {
      ProtectedResourceMetadata: protectedResourceSchema(urls),
      AuthorizationServerMetadata: authorizationServerSchema(urls),
      AgentAuth: agentAuthSchema,
      JsonWebKeySet: jwksSchema,
      ApiCatalog: apiCatalogSchema,
      LinkTarget: linkTargetSchema,
    },
  };
}

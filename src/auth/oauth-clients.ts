// The clients of the authorization-code flow: registered by RFC 7591 (POST /oauth/register), or
// named by the https URL of their Client ID Metadata Document, fetched and checked on first use.
import { randomBytes } from 'node:crypto';
import type { Store } from '../storage/ports.js';
import { ajv } from '../validation/ajv.js';
import { isMetadataDocumentUrl, MetadataDocumentError, type MetadataDocuments } from './client-metadata-document.js';
import { OAuthError } from './errors.js';
import { type ClientMetadata, clientMetadataSchema } from './oauth-schemas.js';
import { redirectUriProblem } from './redirect-uri.js';

const validateMetadata = ajv.compile<ClientMetadata>(clientMetadataSchema);

/** What a sign-in needs to know of its client, however it was registered. */
export interface KnownClient {
  readonly clientId: string;
  readonly clientName: string;
  readonly redirectUris: readonly string[];
  readonly registered: boolean;
}

export interface OAuthClientsDeps {
  readonly store: Pick<Store, 'oauth'>;
  readonly documents: MetadataDocuments;
  readonly now: () => Date;
}

export type OAuthClients = ReturnType<typeof createOAuthClients>;

export function createOAuthClients({ store, documents, now }: OAuthClientsDeps) {
  /** The metadata as given, checked: a refusal is RFC 7591 §3.2.2's invalid_client_metadata or invalid_redirect_uri. */
  function checkMetadata(body: unknown): ClientMetadata {
    if (!validateMetadata(body)) {
      const first = validateMetadata.errors?.[0];
      const where = first?.instancePath ? `${first.instancePath.slice(1)} ` : '';
      throw new OAuthError('invalid_client_metadata', `${where}${first?.message ?? 'is not valid client metadata'}`);
    }
    for (const uri of body.redirect_uris) {
      const problem = redirectUriProblem(uri);
      if (problem !== null) throw new OAuthError('invalid_redirect_uri', problem);
    }
    return body;
  }

  /** POST /oauth/register: a public client (no secret: PKCE protects its codes). 201 with its metadata. */
  async function register(body: unknown): Promise<Record<string, unknown>> {
    const metadata = checkMetadata(body);
    const createdAt = now();
    const client = {
      clientId: `mcp_${randomBytes(16).toString('base64url')}`,
      clientName: metadata.client_name?.trim() ?? 'MCP client',
      clientUri: metadata.client_uri ?? null,
      redirectUris: [...new Set(metadata.redirect_uris)],
      createdAt,
      lastUsedAt: null,
    };
    await store.oauth.createClient(client);
    return {
      client_id: client.clientId,
      client_id_issued_at: Math.floor(createdAt.getTime() / 1000),
      client_name: client.clientName,
      ...(client.clientUri !== null && { client_uri: client.clientUri }),
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // RFC 7591 §2: the server may replace what was asked; every client here is public.
      token_endpoint_auth_method: 'none',
    };
  }

  /** The client a client_id names, or why there is none (for the person's page, not the client). */
  async function resolve(clientId: string): Promise<KnownClient | string> {
    if (isMetadataDocumentUrl(clientId)) return fromDocument(clientId);
    const client = clientId.length <= 100 ? await store.oauth.findClient(clientId) : undefined;
    if (!client) return 'The application asking to sign you in is not registered here.';
    return { clientId, clientName: client.clientName, redirectUris: client.redirectUris, registered: true };
  }

  async function fromDocument(url: string): Promise<KnownClient | string> {
    let document: unknown;
    try {
      document = await documents.get(url);
    } catch (error) {
      if (error instanceof MetadataDocumentError) return `The application's metadata document could not be used: ${error.message}.`;
      throw error;
    }
    let metadata: ClientMetadata;
    try {
      metadata = checkMetadata(document);
    } catch (error) {
      if (error instanceof OAuthError) return `The application's metadata document is not valid: ${error.description}.`;
      throw error;
    }
    if (metadata.client_id !== url) return "The application's metadata document names another client_id.";
    if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== 'none') {
      return "The application's metadata document asks for a client authentication this service does not offer (only none).";
    }
    return {
      clientId: url,
      clientName: metadata.client_name?.trim() ?? new URL(url).host,
      redirectUris: metadata.redirect_uris,
      registered: false,
    };
  }

  return { register, resolve, markUsed: (clientId: string) => store.oauth.markClientUsed(clientId, now()) };
}

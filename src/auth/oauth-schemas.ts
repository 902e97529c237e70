// The wire shape of a client's metadata, as registered (RFC 7591 §2) or published at its client_id
// URL (a Client ID Metadata Document). Unknown members are allowed and ignored (RFC 7591 §2).
import { WRITTEN_TEXT } from '../validation/ajv.js';

export const MAX_REDIRECT_URIS = 10;

export const clientMetadataSchema = {
  $id: 'OAuthClientMetadata',
  type: 'object',
  required: ['redirect_uris'],
  properties: {
    redirect_uris: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_REDIRECT_URIS,
      items: { type: 'string', minLength: 1, maxLength: 2000 },
    },
    client_name: { type: 'string', minLength: 1, maxLength: 100, pattern: WRITTEN_TEXT },
    client_uri: { type: 'string', maxLength: 2000, pattern: '^https://' },
    grant_types: { type: 'array', maxItems: 10, items: { enum: ['authorization_code', 'refresh_token'] } },
    response_types: { type: 'array', maxItems: 10, items: { const: 'code' } },
    token_endpoint_auth_method: { type: 'string', maxLength: 100 },
    scope: { type: 'string', maxLength: 1000 },
    client_id: { type: 'string', maxLength: 2000 },
  },
} as const;

export interface ClientMetadata {
  readonly redirect_uris: readonly string[];
  readonly client_name?: string;
  readonly client_uri?: string;
  readonly token_endpoint_auth_method?: string;
  readonly client_id?: string;
}

// The wire shapes of the agent-auth request bodies (docs/agent-auth.md): the schemas that
// validate them and that the OpenAPI document is built from.
import { WRITTEN_TEXT } from '../validation/ajv.js';
import { TOKEN_TYPE_ID_JAG } from './metadata.js';

const NAME = { type: 'string', minLength: 1, maxLength: 200, pattern: WRITTEN_TEXT } as const;

export const anonymousRegistrationSchema = {
  $id: 'AnonymousRegistration',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'client_name'],
  properties: {
    type: { const: 'anonymous' },
    client_name: NAME,
    // Stored and shown, never fetched (no server-side requests on an agent's behalf).
    client_uri: { type: 'string', format: 'uri', maxLength: 2000, pattern: '^https?://' },
  },
} as const;

export const verifiedEmailRegistrationSchema = {
  $id: 'VerifiedEmailRegistration',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'assertion_type', 'email', 'client_name'],
  properties: {
    type: { const: 'identity_assertion' },
    assertion_type: { const: 'verified_email' },
    email: { type: 'string', format: 'email', maxLength: 254 },
    client_name: NAME,
  },
} as const;

export const claimSchema = {
  $id: 'ClaimRequest',
  type: 'object',
  additionalProperties: false,
  required: ['claim_token'],
  properties: {
    claim_token: { type: 'string', minLength: 1, maxLength: 200 },
    email: { type: 'string', format: 'email', maxLength: 254 },
    otp: { type: 'string', pattern: '^[0-9]{6}$' },
  },
} as const;

export const idJagRegistrationSchema = {
  $id: 'IdJagRegistration',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'assertion_type', 'assertion'],
  properties: {
    type: { const: 'identity_assertion' },
    assertion_type: { const: TOKEN_TYPE_ID_JAG },
    assertion: { type: 'string', minLength: 1, maxLength: 8000 },
    client_name: NAME,
  },
} as const;

// The Inquiry wire shape (docs/api.md): the one schema that validates POST /api/contact,
// the domain service and the MCP tool, and that the OpenAPI document is generated from.
import { OPTIONAL_TEXT, WRITTEN_TEXT } from '../validation/ajv.js';
import type { FromSchema } from './json-schema.js';

export const INQUIRY_LIMITS = {
  nameMaxLength: 200,
  companyMaxLength: 200,
  /** RFC 5321 §4.5.3.1.3: a path is at most 256 octets including the angle brackets. */
  emailMaxLength: 254,
  messageMaxLength: 10_000,
} as const;

/** Well above an inquiry at its longest (~11 KB). */
export const CONTACT_BODY_LIMIT_BYTES = 64 * 1024;

export const inquirySchema = {
  $id: 'Inquiry',
  type: 'object',
  additionalProperties: false,
  required: ['firstName', 'lastName', 'email', 'message'],
  properties: {
    firstName: {
      type: 'string',
      minLength: 1,
      maxLength: INQUIRY_LIMITS.nameMaxLength,
      pattern: WRITTEN_TEXT,
      description: 'First name of the person asking.',
    },
    lastName: {
      type: 'string',
      minLength: 1,
      maxLength: INQUIRY_LIMITS.nameMaxLength,
      pattern: WRITTEN_TEXT,
      description: 'Last name of the person asking.',
    },
    email: {
      type: 'string',
      format: 'email',
      maxLength: INQUIRY_LIMITS.emailMaxLength,
      description: 'Address the studio replies to.',
    },
    company: {
      type: 'string',
      maxLength: INQUIRY_LIMITS.companyMaxLength,
      pattern: OPTIONAL_TEXT,
      description: 'Company or product name (optional).',
    },
    message: {
      type: 'string',
      minLength: 1,
      maxLength: INQUIRY_LIMITS.messageMaxLength,
      pattern: WRITTEN_TEXT,
      description: 'The project brief.',
    },
  },
  examples: [
    {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      company: 'Analytical Engines Ltd',
      message: 'We need a new website for our engine, launching in spring.',
    },
  ],
} as const;

export type InquiryInput = FromSchema<typeof inquirySchema>;

// The three MCP tools: their descriptions, input and output schemas and annotations. The input of
// submit_inquiry is the Inquiry schema itself (its very property objects), plus an optional
// idempotencyKey: one wire shape, two doors.
import { inquiryReceiptSchema } from '../inquiries/receipt.js';
import { inquirySchema } from '../inquiries/schema.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../inquiries/service.js';

const text = { type: 'string' } as const;

/**
 * The Idempotency-Key header's rule (checkIdempotencyKey: 1-255 of U+0021 to U+007E) minus the double
 * quote: the header may wrap its key in quotes, which are dropped, but an argument is already a JSON
 * string, so what the agent sends is the key, checked by this very schema and stored as sent.
 */
export const IDEMPOTENCY_KEY_RULE = `1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters, without spaces or double quotes (e.g. a UUID)`;
export const IDEMPOTENCY_KEY_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
  pattern: '^[!#-~]+$',
  description: `Optional. A key unique to this inquiry: ${IDEMPOTENCY_KEY_RULE}. Retrying with the same key and fields never creates a second inquiry.`,
} as const;

export const submitInquiryInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: inquirySchema.required,
  properties: { ...inquirySchema.properties, idempotencyKey: IDEMPOTENCY_KEY_PROPERTY },
} as const;

const studioInfoOutputSchema = {
  type: 'object',
  required: ['name', 'description', 'location', 'website', 'contactEmail', 'responseTime', 'links'],
  properties: {
    name: text,
    description: text,
    location: text,
    website: text,
    contactEmail: text,
    responseTime: text,
    links: {
      type: 'object',
      required: ['contactEndpoint', 'openapi', 'authMd', 'serverCard'],
      properties: { contactEndpoint: text, openapi: text, authMd: text, serverCard: text },
    },
  },
} as const;

const servicesOutputSchema = {
  type: 'object',
  required: ['services'],
  properties: {
    services: {
      type: 'array',
      items: { type: 'object', required: ['name', 'description'], properties: { name: text, description: text } },
    },
  },
} as const;

export const TOOLS = [
  {
    name: 'get_studio_info',
    title: 'Studio information',
    description:
      'Who the studio is: name, description, location, website, contact email and how quickly it replies to inquiries, ' +
      'plus where its HTTP inquiry endpoint, OpenAPI document and agent auth guide (auth.md) are.',
    inputSchema: { type: 'object', additionalProperties: false, properties: {} },
    outputSchema: studioInfoOutputSchema,
    annotations: { title: 'Studio information', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'list_services',
    title: 'Studio services',
    description:
      'The services the studio offers (name and description of each). Use it to check the studio fits a project before sending an inquiry.',
    inputSchema: { type: 'object', additionalProperties: false, properties: {} },
    outputSchema: servicesOutputSchema,
    annotations: { title: 'Studio services', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'submit_inquiry',
    title: 'Send a project inquiry',
    description:
      "Sends a project inquiry to the studio on a person's behalf: firstName, lastName, email (where the studio replies), " +
      'message (the project brief) and optionally company. Returns a receipt: the reference, the expected response time, the outcome ' +
      '(created, or duplicate where the same email and message arrived in the last 10 minutes, folded into that inquiry), whether ' +
      'it replays an earlier call with the same idempotencyKey, and the attribution (the client id of an accepted bearer token, or null and why). ' +
      'On invalid fields it returns an error naming each field and how to fix it: correct them and call again. ' +
      'Pass the same idempotencyKey when retrying so that the inquiry is sent once.',
    inputSchema: submitInquiryInputSchema,
    outputSchema: inquiryReceiptSchema,
    annotations: {
      title: 'Send a project inquiry',
      readOnlyHint: false,
      destructiveHint: false,
      // Only with the same idempotencyKey (24 hours), or the same email and message (10 minutes), is
      // a repeat folded: otherwise the same arguments send the studio a second inquiry.
      idempotentHint: false,
      openWorldHint: true,
    },
  },
] as const;

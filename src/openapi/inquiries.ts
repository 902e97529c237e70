// The inquiry side of the OpenAPI document: POST /api/contact (submitInquiry), GET
// /api/contact/challenge (getProofOfWorkChallenge) and GET /api/health (getHealth), described from
// the very schema objects the routes validate and answer with.
import { NOT_ALLOWED } from '../http/routes/contact.js';
import { CHALLENGE_RATE_LIMIT, challengeSchema } from '../http/routes/contact-challenge.js';
import { healthSchema } from '../http/routes/health.js';
import { confirmationText } from '../inquiries/confirmation.js';
import { inquiryReceiptSchema } from '../inquiries/receipt.js';
import { CONTACT_BODY_LIMIT_BYTES, inquirySchema } from '../inquiries/schema.js';
import { IDEMPOTENCY_KEY_PROBLEM } from '../inquiries/service.js';
import { CHALLENGE_LIFETIME_MS, PROOF_ALGORITHM } from '../spam/proof-of-work.js';
import {
  type Area,
  type AreaContext,
  component,
  example,
  headerRef,
  INTERNAL_ERROR,
  JSON_TYPE,
  type Json,
  PROBLEM_TYPE,
  parameterRef,
  problemMedia,
  problemResponse,
  RATE_LIMIT_HEADERS,
  ref,
} from './common.js';

const EXAMPLE_REFERENCE = 'INQ-7K2M9Q';

export function inquiriesArea({ profile }: AreaContext): Area {
  const [inquiryExample] = inquirySchema.examples;
  const bodyLimitKiB = CONTACT_BODY_LIMIT_BYTES / 1024;
  const submitInquiry = {
    operationId: 'submitInquiry',
    summary: 'Send a project inquiry',
    description:
      'Stores the inquiry durably, then delivers it to the studio by email and/or webhook (retried until it arrives). ' +
      'No token is needed: an `Authorization: Bearer` access token only attributes the inquiry to a registered agent, ' +
      'and a bad one never blocks it (the 200 then carries `WWW-Authenticate`). With or without an Idempotency-Key, a ' +
      'submission with the same email (case-insensitive) and message as one received in the last 10 minutes folds into it: ' +
      'same reference, no second notification, and only the first is stored. Only well-formed inquiries count against the rate limit.',
    tags: ['Inquiries'],
    security: [{}, { bearer: [] }],
    parameters: [parameterRef('Idempotency-Key'), parameterRef('Altcha'), parameterRef('Honeypot')],
    requestBody: {
      required: true,
      description: `The Inquiry, as JSON of at most ${bodyLimitKiB} KiB. Exactly these properties; nothing is coerced or dropped.`,
      content: { [JSON_TYPE]: { schema: ref('Inquiry'), examples: { inquiry: example('An inquiry', inquiryExample) } } },
    },
    responses: {
      200: {
        description:
          'Stored, and its notifications queued. By default the confirmation text, which names the reference (six characters of ' +
          'Crockford base 32); with `Accept: application/json`, the receipt: the reference, the outcome, whether it replays an ' +
          'earlier request with the same Idempotency-Key, the attribution (whom the bearer token names, or null and why) and the ' +
          "same confirmation text. The receipt is also submit_inquiry's structured content on MCP.",
        headers: {
          ...RATE_LIMIT_HEADERS,
          'Idempotent-Replayed': headerRef('Idempotent-Replayed'),
          'Inquiry-Outcome': headerRef('Inquiry-Outcome'),
          'WWW-Authenticate': headerRef('WWW-Authenticate'),
        },
        content: {
          'text/plain': {
            schema: { type: 'string', pattern: 'INQ-[0-9A-HJKMNP-TV-Z]{6}' },
            examples: { confirmation: example('The confirmation', confirmationText(profile, EXAMPLE_REFERENCE)) },
          },
          [JSON_TYPE]: {
            schema: ref('InquiryReceipt'),
            examples: {
              receipt: example('The receipt', {
                reference: EXAMPLE_REFERENCE,
                outcome: 'created',
                replayed: false,
                responseTime: profile.responseTime,
                confirmation: confirmationText(profile, EXAMPLE_REFERENCE),
                attribution: { client_id: null, reason: 'no_token' },
              }),
            },
          },
        },
      },
      400: problemResponse(
        400,
        'Invalid fields (each listed in `errors`), invalid JSON, an empty or non-object body, or a malformed Idempotency-Key.',
        [
          {
            error: 'invalid_request',
            detail: 'The request has invalid fields; see errors for each one.',
            extra: { errors: [{ pointer: '/email', detail: 'must be a valid email address, such as name@example.com' }] },
          },
          { error: 'invalid_json', detail: 'The request body is not valid JSON.' },
          {
            error: 'invalid_idempotency_key',
            detail: IDEMPOTENCY_KEY_PROBLEM,
          },
        ],
      ),
      413: problemResponse(413, `The body is larger than ${bodyLimitKiB} KiB.`, [
        { error: 'payload_too_large', detail: `The request body is larger than ${bodyLimitKiB} KiB.` },
      ]),
      415: problemResponse(415, 'The body is not sent as application/json, or is JSON in a charset other than UTF-8.', [
        { error: 'unsupported_media_type', detail: 'Send the request body as JSON with Content-Type: application/json.' },
      ]),
      422: problemResponse(422, 'The Idempotency-Key was already used with a different body.', [
        {
          error: 'idempotency_key_reused',
          detail: 'This Idempotency-Key was already used with a different request body. Use a new key for a new inquiry.',
        },
      ]),
      429: problemResponse(
        429,
        'More inquiries from this client address than RATE_LIMIT_INQUIRIES allows (over HTTP and MCP together); wait Retry-After seconds.',
        [{ error: 'rate_limited', detail: 'Too many inquiries from this address: at most 5 per 10 minutes. Try again in 7 minutes.' }],
        { 'Retry-After': headerRef('Retry-After'), ...RATE_LIMIT_HEADERS },
      ),
      500: problemResponse(500, 'Nothing was stored; send the same inquiry again (with the same Idempotency-Key, if any).', [
        {
          error: 'inquiry_not_stored',
          detail: 'The inquiry could not be stored and nothing was saved. Please try again in a moment.',
          extra: { requestId: INTERNAL_ERROR.extra?.requestId },
        },
        INTERNAL_ERROR,
      ]),
    },
  };

  const getChallenge = {
    operationId: 'getProofOfWorkChallenge',
    summary: 'A proof-of-work challenge for the contact page',
    description:
      `A new ALTCHA challenge (${PROOF_ALGORITHM}), signed by the service and valid for ${CHALLENGE_LIFETIME_MS / 60_000} minutes. ` +
      'The contact page solves it in a ' +
      'Web Worker and sends the solution with its inquiry in the `Altcha` header. Optional: an inquiry without a proof is ' +
      `accepted as any other. Never cached; no cookie. At most ${CHALLENGE_RATE_LIMIT.max} a minute per client address.`,
    tags: ['Inquiries'],
    responses: {
      200: {
        description: 'The challenge, as ALTCHA’s solvers take it.',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: { [JSON_TYPE]: { schema: ref('ProofOfWorkChallenge') } },
      },
      429: problemResponse(
        429,
        `More than ${CHALLENGE_RATE_LIMIT.max} challenges a minute from this client address; wait Retry-After seconds.`,
        [{ error: 'rate_limited', detail: 'Too many challenges asked for from this address; try again in 1 minute.' }],
        { 'Retry-After': headerRef('Retry-After'), ...RATE_LIMIT_HEADERS },
      ),
    },
  };

  const getHealth = {
    operationId: 'getHealth',
    summary: 'Service health',
    description: 'Healthy while the inquiry store answers. Not logged when healthy, so load balancers may ask often.',
    tags: ['Health'],
    responses: {
      200: {
        description: 'The service and its store answer.',
        content: {
          [JSON_TYPE]: { schema: ref('Health'), examples: { ok: example('Healthy', { status: 'ok', service: 'studio-inquiry' }) } },
        },
      },
      503: {
        description:
          'The store does not answer (`store_unavailable`), or the service is shutting down (`shutting_down`: ask another instance).',
        content: {
          [PROBLEM_TYPE]: problemMedia(503, [
            { error: 'store_unavailable', detail: 'The inquiry store is not answering; inquiries cannot be accepted right now.' },
            { error: 'shutting_down', detail: 'The service is shutting down. Send the request again in a moment.' },
          ]),
        },
      },
    },
  };

  const notAllowed = (method: (typeof NOT_ALLOWED)[number]): Json => ({
    operationId: `${method.toLowerCase()}Contact`,
    summary: `${method} /api/contact: not allowed`,
    description: 'Inquiries are sent with POST; any other method is answered 405 before its body is read.',
    tags: ['Inquiries'],
    responses: {
      405: problemResponse(
        405,
        'Always: send the inquiry with POST.',
        [{ error: 'method_not_allowed', detail: `Send an inquiry with POST /api/contact and a JSON body; ${method} is not served here.` }],
        { Allow: headerRef('Allow') },
      ),
    },
  });

  return {
    paths: {
      '/api/contact': {
        post: submitInquiry,
        ...Object.fromEntries(NOT_ALLOWED.map((method) => [method.toLowerCase(), notAllowed(method)])),
      },
      '/api/contact/challenge': { get: getChallenge },
      '/api/health': { get: getHealth },
    },
    schemas: {
      Inquiry: component(inquirySchema),
      InquiryReceipt: inquiryReceiptSchema,
      ProofOfWorkChallenge: component(challengeSchema),
      Health: component(healthSchema),
    },
  };
}

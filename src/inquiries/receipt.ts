// The receipt of an accepted inquiry: one wire shape for both doors, the structured content of
// submit_inquiry and POST /api/contact's 200 when JSON is asked for (docs/api.md, "Receipts").
import type { StudioProfile } from '../studio/profile.js';
import { confirmationText } from './confirmation.js';
import type { SubmitResult } from './service.js';

/** How the request's bearer token was taken: the client it names, or none and why. */
export type Attribution =
  | { readonly client_id: string; readonly reason: null }
  | { readonly client_id: null; readonly reason: 'no_token' }
  | { readonly client_id: null; readonly reason: 'invalid_token'; readonly detail: string };

export interface InquiryReceipt {
  readonly reference: string;
  readonly outcome: SubmitResult['outcome'];
  readonly replayed: boolean;
  readonly responseTime: string;
  readonly confirmation: string;
  readonly attribution: Attribution;
}

/** The caller as the door saw it: a valid token's client id, or whether a token came and was refused. */
export interface Caller {
  readonly clientId: string | null;
  readonly tokenRejected: boolean;
}

/** Why an inquiry sent with a refused token is anonymous, and where a client learns to get a good one. */
export const invalidTokenDetail = (metadataUrl: string) =>
  'The inquiry was sent, but without your client id: the bearer token was not accepted (invalid, expired or revoked). ' +
  `To be named as its sender next time, get a new token (see ${metadataUrl}).`;

export function attributionOf({ clientId, tokenRejected }: Caller, metadataUrl: string): Attribution {
  if (clientId !== null) return { client_id: clientId, reason: null };
  if (tokenRejected) return { client_id: null, reason: 'invalid_token', detail: invalidTokenDetail(metadataUrl) };
  return { client_id: null, reason: 'no_token' };
}

export function inquiryReceipt(profile: StudioProfile, submitted: SubmitResult, attribution: Attribution): InquiryReceipt {
  return {
    reference: submitted.reference,
    outcome: submitted.outcome,
    replayed: submitted.replayed,
    responseTime: profile.responseTime,
    confirmation: confirmationText(profile, submitted.reference),
    attribution,
  };
}

const text = (description: string) => ({ type: 'string', description }) as const;

export const inquiryReceiptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['reference', 'outcome', 'replayed', 'responseTime', 'confirmation', 'attribution'],
  properties: {
    reference: {
      type: 'string',
      pattern: '^INQ-[0-9A-HJKMNP-TV-Z]{6}$',
      description: 'The inquiry reference, e.g. INQ-7K2M9Q; quote it in any follow-up.',
    },
    outcome: {
      type: 'string',
      enum: ['created', 'duplicate'],
      description:
        'created: a new inquiry. duplicate: the same email and message as an inquiry received in the last 10 minutes, folded ' +
        "into it: its reference, and only the first one's fields are kept.",
    },
    replayed: {
      type: 'boolean',
      description:
        'true when this answers a retry with an idempotency key already answered: the first answer again (its reference and ' +
        'outcome), nothing stored anew.',
    },
    responseTime: text('How soon the studio replies, e.g. "24 hours".'),
    confirmation: text('The confirmation text a person would see.'),
    attribution: {
      type: 'object',
      additionalProperties: false,
      required: ['client_id', 'reason'],
      description:
        "Whom this request's bearer token names: the registered client's id, or null and why (no_token: none was sent; " +
        'invalid_token: one was sent and not accepted, see detail). A bad token never blocks the inquiry.',
      properties: {
        client_id: { type: ['string', 'null'], description: 'The client id of the accepted token, or null.' },
        reason: { type: ['string', 'null'], enum: [null, 'no_token', 'invalid_token'], description: 'null when a token was accepted.' },
        detail: text('With invalid_token: what happened and where to get a new token.'),
      },
    },
  },
} as const;

// POST /api/contact (docs/api.md): validate the body and Idempotency-Key (before the rate limit, so
// corrections in the form use no allowance) → a retry answered from a read, or the rate limit → the
// page's signals (proof of work, honeypot) → the inquiry service (one not stored gives its use back)
// → the plain-text confirmation, or the receipt as JSON when the client asks for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdempotencyKeyError } from '../../errors.js';
import { confirmationText } from '../../inquiries/confirmation.js';
import { admitInquiry, type LimitRule, type LimitVerdict, type WindowLimiter } from '../../inquiries/rate-limit.js';
import { attributionOf, type Caller, inquiryReceipt } from '../../inquiries/receipt.js';
import { inquirySchema } from '../../inquiries/schema.js';
import { checkIdempotencyKey, type InquiryService } from '../../inquiries/service.js';
import type { ProofOfWork } from '../../spam/proof-of-work.js';
import type { StudioProfile } from '../../studio/profile.js';
import { prefers, varyOnAccept } from '../accept.js';
import { type BearerOptions, bearerClient } from '../bearer.js';
import { problem, refusal, sendProblem } from '../problems.js';

const CONTACT_PATH = '/api/contact';
/** The methods answered 405 at CONTACT_PATH (and HEAD, as GET's); the OpenAPI document lists them. */
export const NOT_ALLOWED = ['GET', 'PUT', 'DELETE', 'PATCH'] as const;

export interface ContactRouteOptions extends BearerOptions {
  readonly inquiries: InquiryService;
  readonly profile: StudioProfile;
  /** RATE_LIMIT_INQUIRIES, shared with the MCP tool. */
  readonly limiter: WindowLimiter;
  readonly proofOfWork: Pick<ProofOfWork, 'check'>;
  /** PUBLIC_URL's origin: a request from a page of it (its `Origin`) came from the contact page. */
  readonly pageOrigin: string;
}

/**
 * What the contact page sends beside the five fields (docs/api.md): its proof of work (ALTCHA's
 * payload) and word that its honeypot was filled. Neither is ever refused: a malformed proof is
 * only an invalid one, and the answer is the same as to any other inquiry.
 */
const PROOF_HEADER = 'altcha';
const HONEYPOT_HEADER = 'honeypot';

export async function contactRoute(app: FastifyInstance, options: ContactRouteOptions) {
  const { inquiries, profile, limiter, proofOfWork } = options;
  app.post(CONTACT_PATH, { schema: { body: inquirySchema }, preHandler: checkIdempotencyKeyHeader }, async (request, reply) => {
    const idempotencyKey = idempotencyKeyOf(request);
    let caller: Caller = { clientId: null, tokenRejected: false };
    // Not stored (a 500 inquiry_not_stored, …): admitInquiry gives its use back, then the error is answered.
    const admission = await admitInquiry(
      limiter,
      request.ip,
      () => inquiries.answerRetry(request.body, idempotencyKey),
      async (retry) => {
        const { clientId, trustedAgent, tokenRejected } = await bearerClient(request.headers.authorization, reply, options);
        caller = { clientId, tokenRejected };
        if (retry) return retry;
        // Checked once admitted: a valid proof is spent here, whatever becomes of the inquiry.
        const proof = await proofOfWork.check(headerOf(request, PROOF_HEADER));
        const honeypot = Boolean(headerOf(request, HONEYPOT_HEADER));
        const source = request.headers.origin === options.pageOrigin ? 'page' : 'api';
        return inquiries.submit(request.body, { idempotencyKey, source, clientId, trustedAgent, proof, honeypot });
      },
    );
    if (admission.refused) return refuse(reply, admission.refused, admission.rule);
    if (admission.verdict !== null) rateLimitFields(reply, admission.verdict);
    const result = admission.answer;
    // A folded duplicate keeps only the first submission's fields: a person who corrected a name
    // and sent again must be told (the contact page says so).
    reply.header('inquiry-outcome', result.outcome);
    if (result.replayed) reply.header('idempotent-replayed', 'true');
    varyOnAccept(reply);
    if (prefers(request.headers.accept, 'application/json', 'text/plain')) {
      return reply.type('application/json').send(inquiryReceipt(profile, result, attributionOf(caller, options.resourceMetadataUrl)));
    }
    return reply.type('text/plain; charset=utf-8').send(confirmationText(profile, result.reference));
  });

  // RFC 9110 §15.5.6: another method is a 405 with `Allow: POST` (HEAD too, as GET's), not a 404.
  // Answered before any body is read, so whatever the body; an OPTIONS is the CORS preflight's.
  const notAllowed = refusal(async (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(
      reply.header('allow', 'POST'),
      problem(
        405,
        'method_not_allowed',
        `Send an inquiry with POST ${CONTACT_PATH} and a JSON body; ${request.method} is not served here.`,
      ),
    ),
  );
  for (const method of NOT_ALLOWED) app.route({ method, url: CONTACT_PATH, onRequest: notAllowed, handler: notAllowed });
}

/**
 * RATE_LIMIT_INQUIRIES, counted after validation (a person correcting the form uses no allowance),
 * shared with the MCP tool: the draft IETF RateLimit-* fields on every counted answer (not on one
 * whose inquiry was not stored: its use was given back), and a 429 with Retry-After past the limit.
 */
function rateLimitFields(reply: FastifyReply, verdict: LimitVerdict): FastifyReply {
  return reply
    .header('ratelimit-limit', verdict.limit)
    .header('ratelimit-remaining', verdict.remaining)
    .header('ratelimit-reset', verdict.resetSeconds);
}

function refuse(reply: FastifyReply, verdict: LimitVerdict, { max, window }: LimitRule): FastifyReply {
  return sendProblem(
    rateLimitFields(reply, verdict).header('retry-after', verdict.retryAfterSeconds),
    problem(
      429,
      'rate_limited',
      `Too many inquiries from this address: at most ${max} per ${window}. Try again in ${waitText(verdict.retryAfterSeconds)}.`,
    ),
  );
}

/** "45 seconds", "1 minute", "10 minutes": a wait as a person reads it. */
export function waitText(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  return headerOf(request, 'idempotency-key');
}

/** A request header's value; several of the same name joined as Node joins them. */
function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A malformed Idempotency-Key is a 400 (invalid_idempotency_key) that costs no allowance. */
async function checkIdempotencyKeyHeader(request: FastifyRequest): Promise<void> {
  // Node joins repeated headers with ", ", which the rule below would call a key with a space.
  const { rawHeaders } = request.raw;
  if (rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'idempotency-key').length > 1) {
    throw new IdempotencyKeyError('Send one Idempotency-Key header, not several.');
  }
  const key = idempotencyKeyOf(request);
  if (key !== undefined) checkIdempotencyKey(key);
}

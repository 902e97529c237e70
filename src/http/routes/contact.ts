// POST /api/contact (interface document §4.1): parse → rate-limit → the inquiry service → the
// plain-text confirmation. Validation happens before the rate limiter, so mistakes a person
// corrects in the form do not use up their allowance.
import type { FastifyInstance } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { confirmationText } from '../../inquiries/confirmation.js';
import { inquirySchema } from '../../inquiries/schema.js';
import type { InquiryService } from '../../inquiries/service.js';
import type { StudioProfile } from '../../studio/profile.js';

export interface ContactRouteOptions {
  readonly inquiries: InquiryService;
  readonly profile: StudioProfile;
  readonly rateLimit: RateLimitConfig | null;
}

export async function contactRoute(app: FastifyInstance, { inquiries, profile, rateLimit }: ContactRouteOptions) {
  app.post(
    '/api/contact',
    {
      schema: { body: inquirySchema },
      config: {
        rateLimit: rateLimit
          ? {
              max: rateLimit.max,
              timeWindow: rateLimit.windowMs,
              hook: 'preHandler',
              errorResponseBuilder: (_request, context) =>
                Object.assign(
                  new Error(`Too many inquiries from this address: at most ${context.max} per ${context.after}. Try again later.`),
                  { statusCode: 429 },
                ),
            }
          : false,
      },
    },
    async (request, reply) => {
      const idempotencyKey = request.headers['idempotency-key'];
      const result = await inquiries.submit(request.body, {
        idempotencyKey: Array.isArray(idempotencyKey) ? idempotencyKey.join(', ') : idempotencyKey,
      });
      if (result.outcome === 'replayed') reply.header('idempotent-replayed', 'true');
      return reply.type('text/plain; charset=utf-8').send(confirmationText(profile, result.reference));
    },
  );
}

// GET /api/health (docs/api.md): 200 while the store answers, 503 problem+json when not.
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/ports.js';
import { problem, sendProblem } from '../problems.js';

export const healthSchema = {
  $id: 'Health',
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: { type: 'string', const: 'ok' },
    service: { type: 'string' },
  },
} as const;

export const HEALTH_PATH = '/api/health';

const HEALTHY = { status: 'ok', service: 'studio-inquiry' } as const;

export async function healthRoute(app: FastifyInstance, { store }: { store: Pick<Store, 'ping'> }) {
  // Health checks that arrive together share one round trip to the store.
  let inFlight: Promise<void> | undefined;
  const ping = () => {
    inFlight ??= store.ping().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  app.get(HEALTH_PATH, { schema: { response: { 200: healthSchema } } }, async (request, reply) => {
    try {
      await ping();
    } catch (error) {
      request.log.error({ err: error }, 'health check: the store does not answer');
      return sendProblem(
        reply,
        problem(503, 'store_unavailable', 'The inquiry store is not answering; inquiries cannot be accepted right now.'),
      );
    }
    return HEALTHY;
  });
}

// GET /metrics for Prometheus, off the public surface: served only when METRICS_TOKEN is set, and
// then only to a request bearing it.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics.js';
import { problem, sendProblem } from '../problems.js';

/** The route label of a request no route matched (404s, and URLs that cannot be decoded). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Counts every answered request by its route pattern (not the raw URL: bounded labels). Call on the root app. */
export function countRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.requests.inc({ method: request.method, route: request.routeOptions.url ?? UNMATCHED_ROUTE, status: reply.statusCode });
  });
}

export async function metricsRoute(app: FastifyInstance, { metrics, token }: { metrics: Metrics; token: string }) {
  // Digests of equal length, compared in constant time: neither the token nor its length can be
  // learnt from response times.
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  const expected = digest(token);
  app.get('/metrics', async (request, reply) => {
    // RFC 9110 §11.1: the scheme is case-insensitive ("bearer" is Bearer).
    const [, credentials = ''] = /^bearer +(.*)$/i.exec(request.headers.authorization ?? '') ?? [];
    if (!timingSafeEqual(digest(credentials), expected)) {
      // RFC 6750 §3.1: a request that sent credentials is told they were not valid.
      const challenge = request.headers.authorization === undefined ? 'Bearer' : 'Bearer error="invalid_token"';
      return sendProblem(
        reply.header('www-authenticate', challenge),
        problem(401, 'unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN>.'),
      );
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

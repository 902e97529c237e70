// Content negotiation on the Accept header (RFC 9110 §12.5.1): the quality a client gives a media
// type, from the most specific range that matches it.
import type { FastifyReply } from 'fastify';

/** RFC 9110 §12.5.5: an answer chosen by Accept says so, beside what else it varies on (Origin). */
export function varyOnAccept(reply: FastifyReply): FastifyReply {
  const vary = reply.getHeader('vary');
  const names =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((name) => name.trim());
  return names.some((name) => name.toLowerCase() === 'accept') ? reply : reply.header('vary', [...names, 'Accept'].join(', '));
}

/** The q of `type` in `accept`: 0 if no range matches it; 1 with no Accept header at all. */
export function acceptQuality(accept: string | undefined, type: string): number {
  if (accept === undefined) return 1;
  const [major] = type.split('/');
  let best: { specificity: number; q: number } | undefined;
  for (const range of accept.split(',')) {
    const [name = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const specificity = name === type ? 3 : name === `${major}/*` ? 2 : name === '*/*' ? 1 : 0;
    if (specificity === 0 || (best !== undefined && best.specificity >= specificity)) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    best = { specificity, q: Number.isFinite(quality) ? Math.min(Math.max(quality, 0), 1) : 0 };
  }
  return best?.q ?? 0;
}

/**
 * Whether the client named `type` itself (not through a wildcard) and prefers it to `fallback`
 * (`ties`: or likes both as much).
 */
export function prefers(accept: string | undefined, type: string, fallback: string, ties = false): boolean {
  if (accept === undefined) return false;
  const named = accept.split(',').some((range) => range.split(';')[0]?.trim().toLowerCase() === type);
  const [wanted, other] = [acceptQuality(accept, type), acceptQuality(accept, fallback)];
  return named && wanted > 0 && (ties ? wanted >= other : wanted > other);
}

// Documents any web page may read whatever CORS_ORIGINS allows (the discovery documents and the
// others written for agents; docs/agent-auth.md): their GET handlers send ACAO *, and the preflight a
// client's own header (MCP-Protocol-Version) causes is answered here, not by the API's CORS rules.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const PUBLIC_DOCUMENTS = new Set(['/openapi.json', '/auth.md', '/llms.txt', '/mcp/server-card']);
/** How long a browser may keep the answer (the API's preflights: the same). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** A document of those, that this service serves (a preflight for a path it does not serve is the API's). */
export function isPublicDocument(app: FastifyInstance, url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return (path.startsWith('/.well-known/') || PUBLIC_DOCUMENTS.has(path)) && app.hasRoute({ method: 'GET', url: path });
}

/** A preflight for a public document: any origin may GET it, with whatever headers it asked for. */
export function answerPublicPreflight(request: FastifyRequest, reply: FastifyReply): void {
  const requestedHeaders = request.headers['access-control-request-headers'];
  reply
    .code(204)
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', 'GET, HEAD')
    .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
  // Without credentials, allowing the headers a page asked for only lets it read a public document.
  if (requestedHeaders !== undefined) reply.header('access-control-allow-headers', requestedHeaders);
  reply.send();
}

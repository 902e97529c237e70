// Who sent a request, from its bearer token: shared by POST /api/contact and /mcp.
import type { FastifyReply } from 'fastify';
import type { AgentAuth } from '../auth/service.js';

export interface BearerOptions {
  readonly auth: Pick<AgentAuth, 'authenticate'>;
  /** RFC 9728 §5.1: where a client that sent a bad token learns how to get a good one. */
  readonly resourceMetadataUrl: string;
  /** The access tokens' audience for this resource. */
  readonly audience: string;
}

/**
 * A valid token attributes the inquiry to its client; no token is fine; a bad, expired or revoked
 * token never costs the studio a lead: the inquiry is taken as anonymous and the answer says why
 * (RFC 6750 §3.1 error="invalid_token", RFC 9728 §5.1 resource_metadata; docs/agent-auth.md).
 */
export async function bearerClient(
  authorization: string | undefined,
  reply: FastifyReply,
  { auth, resourceMetadataUrl, audience }: BearerOptions,
): Promise<{ clientId: string | null; trustedAgent: boolean; tokenRejected: boolean }> {
  // Other schemes (Basic, …) are not ours to judge: ignored, like no header at all.
  if (authorization === undefined || !/^Bearer(\s|$)/i.test(authorization))
    return { clientId: null, trustedAgent: false, tokenRejected: false };
  const token = bearerToken(authorization);
  const client = token ? await auth.authenticate(token, audience) : null;
  if (client === null) {
    reply.header('www-authenticate', `Bearer error="invalid_token", resource_metadata="${resourceMetadataUrl}"`);
  }
  return { clientId: client?.clientId ?? null, trustedAgent: client?.claimed ?? false, tokenRejected: client === null };
}

/**
 * The token of an Authorization header of the Bearer scheme (RFC 6750 §2.1); undefined for no
 * header or another scheme, and '' for a malformed Bearer credential (which no token matches).
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !/^Bearer(\s|$)/i.test(authorization)) return undefined;
  return /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)?.[1] ?? '';
}

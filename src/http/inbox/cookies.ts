// The inbox's session cookie (docs/inbox.md): HttpOnly, SameSite=Strict; under https Secure and
// `__Host-` prefixed (RFC 6265bis §4.1.3.2: Path=/, no Domain), so no other host can set it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_MAX_MS } from '../../inbox/access.js';

export interface SessionCookie {
  readonly name: string;
  /** What follows the value in Set-Cookie. */
  readonly attributes: string;
}

export function sessionCookie(publicUrl: string, inboxPath: string): SessionCookie {
  if (publicUrl.startsWith('https:')) return { name: '__Host-inbox-session', attributes: 'Path=/; Secure; HttpOnly; SameSite=Strict' };
  return { name: 'inbox-session', attributes: `Path=${inboxPath}; HttpOnly; SameSite=Strict` };
}

/** The cookie's value in the request, if it has one. */
export function readCookie(request: FastifyRequest, cookie: SessionCookie): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === cookie.name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

export function setCookie(reply: FastifyReply, cookie: SessionCookie, value: string): FastifyReply {
  return reply.header('set-cookie', `${cookie.name}=${value}; Max-Age=${SESSION_MAX_MS / 1000}; ${cookie.attributes}`);
}

export function clearCookie(reply: FastifyReply, cookie: SessionCookie): FastifyReply {
  return reply.header('set-cookie', `${cookie.name}=; Max-Age=0; ${cookie.attributes}`);
}

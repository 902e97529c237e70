// What the inbox's handlers share: the page context, the session from the cookie, HTML answers that
// no shared cache keeps, and the checks every state-changing request passes (Origin, CSRF token).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Access, type InboxSession, sameToken } from '../../inbox/access.js';
import type { InboxService } from '../../inbox/service.js';
import type { StudioProfile } from '../../studio/profile.js';
import type { InboxAssets, PageContext } from '../../web/inbox/layout.js';
import { messagePage } from '../../web/inbox/layout.js';
import { signInForm } from '../../web/inbox/sign-in.js';
import { readCookie, type SessionCookie } from './cookies.js';

export interface InboxHttp {
  readonly access: Access;
  readonly service: InboxService;
  readonly profile: StudioProfile;
  /** The inbox's path (base path of PUBLIC_URL + /inbox). */
  readonly root: string;
  /** PUBLIC_URL's origin: a state-changing request must come from a page of it. */
  readonly origin: string;
  readonly cookie: SessionCookie;
  readonly assets: InboxAssets;
  /** STUDIO_TIMEZONE. */
  readonly timeZone: string;
  /** The overview's delivery health, as HTML. */
  readonly health: () => Promise<string>;
}

/** The context pages render with, for the signed-in session if any. */
export function pageContext(http: InboxHttp, session?: InboxSession): PageContext {
  return {
    root: http.root,
    studioName: http.profile.name,
    assets: http.assets,
    timeZone: http.timeZone,
    ...(session && { user: { email: session.email, csrfToken: session.csrfToken } }),
  };
}

/** An HTML answer (every inbox answer is private, never stored, and not indexed). */
export function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

export const sessionOf = (http: InboxHttp, request: FastifyRequest) => http.access.session(readCookie(request, http.cookie));

/** The session, or the sign-in page answered 401 (undefined then). */
export async function requireSession(http: InboxHttp, request: FastifyRequest, reply: FastifyReply): Promise<InboxSession | undefined> {
  const session = await sessionOf(http, request);
  if (session === undefined) {
    const next = request.method === 'GET' ? nextPath(http, request.url) : undefined;
    sendHtml(reply, 401, signInForm(pageContext(http), 'Your session has ended, or you have not signed in yet.', next));
  }
  return session;
}

/** Where to go once signed in: an inquiry's page of this inbox (the notification mail's link), nothing else. */
export function nextPath(http: InboxHttp, value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.startsWith(`${http.root}/inquiries/`)) return undefined;
  return /^INQ-[0-9A-HJKMNP-TV-Z]{6}$/.test(value.slice(http.root.length + '/inquiries/'.length)) ? value : undefined;
}

/**
 * Whether a request comes from a page of the inbox's own origin: its Origin, or where the page's
 * Referrer-Policy (no-referrer) makes the browser send "null", its Sec-Fetch-Site (Fetch Metadata),
 * a header no script can set.
 */
export function sameOrigin(http: InboxHttp, request: FastifyRequest): boolean {
  const { origin } = request.headers;
  if (origin === http.origin) return true;
  return (origin === undefined || origin === 'null') && request.headers['sec-fetch-site'] === 'same-origin';
}

export function refuseForeign(http: InboxHttp, reply: FastifyReply, session?: InboxSession): FastifyReply {
  const text = 'This request did not come from a page of this inbox, so nothing was changed. Go back to the inbox and try again.';
  return sendHtml(
    reply,
    403,
    messagePage(pageContext(http, session), 'Request refused', text, `<p><a href="${http.root}">Back to the inbox</a></p>`),
  );
}

/** The session of a state-changing request from its own origin with its CSRF token; otherwise answered (401 or 403) and undefined. */
export async function guardChange(http: InboxHttp, request: FastifyRequest, reply: FastifyReply): Promise<InboxSession | undefined> {
  if (!sameOrigin(http, request)) {
    refuseForeign(http, reply);
    return undefined;
  }
  const session = await requireSession(http, request, reply);
  if (session === undefined) return undefined;
  if (!sameToken(formField(request, '_csrf'), session.csrfToken)) {
    refuseForeign(http, reply, session);
    return undefined;
  }
  return session;
}

/** A field of the urlencoded form body (the last one of a name given twice is ignored: the first counts). */
export function formField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body;
  return body instanceof URLSearchParams ? (body.get(name) ?? undefined) : undefined;
}

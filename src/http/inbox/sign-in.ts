// The inbox's sign-in and sign-out (docs/inbox.md). Asking for a link answers the same whoever asks
// (the mail goes out, or not, after the answer); a link's page only shows a button, whose POST spends
// the link, so that a mail scanner opening it spends nothing.
import type { FastifyInstance } from 'fastify';
import { messagePage } from '../../web/inbox/layout.js';
import { confirmSignIn, linkSent, signInForm } from '../../web/inbox/sign-in.js';
import { formField, guardChange, type InboxHttp, nextPath, pageContext, refuseForeign, sameOrigin, sendHtml } from './context.js';
import { clearCookie, readCookie, setCookie } from './cookies.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Sign-in requests per client address: a person asks once or twice; more is someone probing. */
export const SIGN_IN_RATE_LIMIT = { max: 10, timeWindow: 15 * 60_000 } as const;

const tooMany = (_request: unknown, context: { after: string }) =>
  Object.assign(new Error(`Too many sign-in requests from this address; try again in ${context.after}.`), { statusCode: 429 });

export function signInRoutes(
  app: FastifyInstance,
  http: InboxHttp,
  limit: { readonly max: number; readonly timeWindow: number } = SIGN_IN_RATE_LIMIT,
) {
  app.post('/inbox/sign-in', { config: { rateLimit: { ...limit, errorResponseBuilder: tooMany } } }, async (request, reply) => {
    if (!sameOrigin(http, request)) return refuseForeign(http, reply);
    const email = formField(request, 'email')?.trim() ?? '';
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) {
      return sendHtml(reply, 400, signInForm(pageContext(http), 'That is not an email address such as ada@example.com.'));
    }
    // After the answer, so that its timing says nothing about whether the address is a user's.
    const next = nextPath(http, formField(request, 'next'));
    setImmediate(() => {
      http.access
        .requestLink(email, next)
        .catch((error: unknown) => request.log.error({ err: error }, 'the sign-in link could not be queued'));
    });
    return sendHtml(reply, 200, linkSent(pageContext(http)));
  });

  // The token is in the address: this route's request lines are not logged (logLevel).
  app.get('/inbox/sign-in', { logLevel: 'warn' }, async (request, reply) => {
    const { token, next } = request.query as { token?: unknown; next?: unknown };
    if (typeof token !== 'string' || !TOKEN.test(token)) {
      return sendHtml(reply, 400, signInForm(pageContext(http), 'That sign-in link is not complete: ask for a new one.'));
    }
    return sendHtml(reply, 200, confirmSignIn(pageContext(http), token, nextPath(http, next)));
  });

  app.post('/inbox/session', { logLevel: 'warn' }, async (request, reply) => {
    if (!sameOrigin(http, request)) return refuseForeign(http, reply);
    const token = formField(request, 'token') ?? '';
    const session = TOKEN.test(token) ? await http.access.redeem(token) : undefined;
    if (session === undefined) {
      return sendHtml(reply, 400, signInForm(pageContext(http), 'That sign-in link has been used or has expired: ask for a new one.'));
    }
    return setCookie(reply, http.cookie, session.id).redirect(nextPath(http, formField(request, 'next')) ?? http.root, 303);
  });

  app.post('/inbox/sign-out', async (request, reply) => {
    const session = await guardChange(http, request, reply);
    if (session === undefined) return reply;
    await http.access.signOut(readCookie(request, http.cookie) ?? '');
    const extra = `<p><a href="${http.root}">Sign in again</a></p>`;
    return sendHtml(
      clearCookie(reply, http.cookie),
      200,
      messagePage(pageContext(http), 'Signed out', 'You are signed out of the inbox on this device.', extra),
    );
  });
}

// The sign-in doors of the authorization-code flow: POST /oauth/register (RFC 7591), GET
// /oauth/authorize (the request checked, the consent page shown) and POST /oauth/authorize (the
// page's form). The page's form is bound to the browser that opened it by a cookie, and posted from
// this origin only. Token, refresh and revocation share /oauth/token and /oauth/revoke (agent-auth.ts).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authorizations, AuthorizeOutcome } from '../../auth/authorization.js';
import { OAuthError } from '../../auth/errors.js';
import { AUTH_BODY_LIMIT_BYTES, AUTH_RATE_LIMITS, type AuthRateLimits, type RateLimit } from '../../auth/limits.js';
import type { OAuthClients } from '../../auth/oauth-clients.js';
import { basePath } from '../../auth/urls.js';
import { renderConsentPage, renderRefusalPage } from '../../web/consent-page.js';
import { baseStylesheetUrl } from '../documents.js';
import { registerFormParser } from '../form-body.js';

const CONSENT_CSS = new URL('../../web/consent.css', import.meta.url);
/** The browser's secret for its sign-ins: an hour covers any consent page left open (15 minutes). */
const BROWSER_COOKIE_MAX_AGE_SECONDS = 60 * 60;

export interface OAuthRouteOptions {
  readonly publicUrl: string;
  readonly studioName: string;
  readonly clients: OAuthClients;
  readonly authorizations: Authorizations;
  readonly limits?: AuthRateLimits;
  /** The helmet Content-Security-Policy, to which the consent page adds its redirect's origin. */
  readonly contentSecurityPolicy: string;
}

const rateLimited = (limit: RateLimit) => ({
  ...limit,
  errorResponseBuilder: (_request: unknown, context: { after: string }) =>
    Object.assign(new Error(`Too many requests from this address; try again in ${context.after}.`), { statusCode: 429 }),
});

export async function oauthRoutes(app: FastifyInstance, options: OAuthRouteOptions) {
  const { publicUrl, studioName, clients, authorizations, contentSecurityPolicy } = options;
  const limits = options.limits ?? AUTH_RATE_LIMITS;
  const root = basePath(publicUrl);
  const origin = new URL(publicUrl).origin;
  const secure = publicUrl.startsWith('https:');
  // RFC 6265bis §4.1.3.2: __Host- pins the cookie to this host over https.
  const cookieName = secure ? '__Host-oauth-browser' : 'oauth-browser';
  const css = await readFile(CONSENT_CSS);
  const page = { studioName, css: [await baseStylesheetUrl(root), `${root}/assets/consent.css`], action: `${root}/oauth/authorize` };
  registerFormParser(app);

  app.get('/assets/consent.css', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(css),
  );

  app.post(
    '/oauth/register',
    { bodyLimit: AUTH_BODY_LIMIT_BYTES, config: { rateLimit: rateLimited(limits.register) } },
    async (request, reply) => {
      if (!request.headers['content-type']?.startsWith('application/json')) {
        throw new OAuthError('invalid_client_metadata', 'send the client metadata as JSON (RFC 7591 §3.1)');
      }
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await clients.register(request.body));
    },
  );

  /** The browser's secret from its cookie, or a new one set on this answer. */
  function browserSecret(request: FastifyRequest, reply: FastifyReply): string {
    const existing = cookie(request.headers.cookie, cookieName);
    if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const secret = randomBytes(32).toString('base64url');
    const attributes = `Path=/; Max-Age=${BROWSER_COOKIE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
    reply.header('set-cookie', `${cookieName}=${secret}; ${attributes}`);
    return secret;
  }

  const answer = (reply: FastifyReply, outcome: AuthorizeOutcome) => {
    // same-origin: the form's post keeps its Origin (no-referrer would make it "null"); other sites get no Referer.
    reply.header('cache-control', 'no-store').header('referrer-policy', 'same-origin');
    if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 303);
    if (outcome.kind === 'refused') return reply.code(400).type('text/html; charset=utf-8').send(renderRefusalPage(outcome.message, page));
    // Chromium applies form-action to the redirect that follows a post: the client's origin is allowed too.
    const policy = contentSecurityPolicy
      .replace("form-action 'self'", `form-action 'self' ${outcome.view.redirectOrigin}`)
      .replace("frame-ancestors 'self'", "frame-ancestors 'none'");
    return reply.header('content-security-policy', policy).type('text/html; charset=utf-8').send(renderConsentPage(outcome.view, page));
  };

  const signIn = { config: { rateLimit: rateLimited(limits.authorize) } };
  app.get('/oauth/authorize', signIn, async (request, reply) =>
    answer(reply, await authorizations.begin(request.query as Record<string, unknown>, browserSecret(request, reply))),
  );

  app.post('/oauth/authorize', { ...signIn, bodyLimit: AUTH_BODY_LIMIT_BYTES }, async (request, reply) => {
    const refused = (message: string) => answer(reply, { kind: 'refused', message });
    // The form is posted by this service's own page; a post from anywhere else is refused.
    const from = request.headers.origin;
    if (from !== undefined && from !== origin) return refused('This form was sent from another site.');
    const browser = cookie(request.headers.cookie, cookieName);
    const form = (request.body ?? {}) as Record<string, unknown>;
    if (browser === undefined || typeof form.request !== 'string') return refused('This sign-in was not started in this browser.');
    const outcome =
      form.action === 'send_code'
        ? await authorizations.sendCode(form.request, browser, form.email)
        : await authorizations.decide(form.request, browser, form.action, form.otp);
    return answer(reply, outcome);
  });
}

/** One cookie's value from a Cookie header (RFC 6265 §5.4), or undefined. */
function cookie(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(';') ?? []) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

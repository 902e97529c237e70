// The studio's inbox under /inbox (docs/inbox.md): server-rendered pages behind a sign-in by mailed
// link. Its own scope: form bodies parsed, every answer private, never stored and not indexed, and
// its errors answered as pages. Registered only when INBOX_USERS (or INQUIRY_TO) names someone.
import type { FastifyInstance } from 'fastify';
import { basePath } from '../../auth/urls.js';
import type { Config } from '../../config.js';
import type { Access } from '../../inbox/access.js';
import type { InboxService } from '../../inbox/service.js';
import type { StudioProfile } from '../../studio/profile.js';
import { alertBanner, healthSection } from '../../web/inbox/health.js';
import { messagePage } from '../../web/inbox/layout.js';
import { baseStylesheetUrl, sendVersionedAsset } from '../documents.js';
import { readInboxAssets } from '../inbox/assets.js';
import { type InboxHttp, pageContext, sendHtml } from '../inbox/context.js';
import { sessionCookie } from '../inbox/cookies.js';
import { inquiryRoutes } from '../inbox/inquiry.js';
import { listRoutes } from '../inbox/list.js';
import { signInRoutes } from '../inbox/sign-in.js';

/** Form bodies are a few fields: far below the API's limit. */
const FORM_BODY_LIMIT_BYTES = 8 * 1024;

export interface InboxRouteOptions {
  readonly config: Config;
  readonly profile: StudioProfile;
  readonly access: Access;
  readonly service: InboxService;
  /** Sign-in requests per client address (SIGN_IN_RATE_LIMIT unless given). */
  readonly signInLimit?: { readonly max: number; readonly timeWindow: number };
}

const ERROR_TEXTS: Readonly<Record<number, string>> = {
  400: 'The request could not be read.',
  413: 'The form sent was too large.',
  415: 'The form was not sent as a form.',
  429: 'Too many requests from this address: wait a few minutes and try again.',
};

export async function inboxRoutes(app: FastifyInstance, options: InboxRouteOptions) {
  const root = `${basePath(options.config.publicUrl)}/inbox`;
  const files = await readInboxAssets();
  const assetUrl = (file: 'inbox.css' | 'inbox.js') => `${root}/assets/${file}?v=${files.get(file)?.version}`;
  const http: InboxHttp = {
    access: options.access,
    service: options.service,
    profile: options.profile,
    root,
    origin: new URL(options.config.publicUrl).origin,
    cookie: sessionCookie(options.config.publicUrl, root),
    assets: { css: [await baseStylesheetUrl(basePath(options.config.publicUrl)), assetUrl('inbox.css')], js: assetUrl('inbox.js') },
    timeZone: options.config.studioTimeZone,
    health: async () => healthSection(await options.service.health(), options.config.studioTimeZone),
  };
  const banner = async () => alertBanner(await options.service.health(), root, options.config.studioTimeZone);

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'private, no-store').header('x-robots-tag', 'noindex, nofollow');
  });
  app.setErrorHandler((error: { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'the inbox failed to answer');
    const text =
      ERROR_TEXTS[status] ??
      (status === 500 ? 'Something went wrong on our side; nothing is lost. Try again in a moment.' : 'The request could not be answered.');
    return sendHtml(reply, status, messagePage(pageContext(http), status === 500 ? 'Something went wrong' : 'Request refused', text));
  });

  for (const [file, asset] of files) {
    // The assets alone may be cached (they hold nothing of anyone's).
    app.get(`/inbox/assets/${file}`, async (request, reply) => sendVersionedAsset(request, reply, asset));
  }
  signInRoutes(app, http, options.signInLimit);
  listRoutes(app, http, banner);
  inquiryRoutes(app, http, banner);
}

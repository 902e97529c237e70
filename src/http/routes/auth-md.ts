// GET /auth.md (docs/agent-auth.md): the agent-facing walk-through, as Markdown. Public,
// cacheable and open to every origin, like the discovery documents it explains.
import type { FastifyInstance } from 'fastify';
import { authMarkdown } from '../../auth/auth-md.js';
import type { AuthFeatures } from '../../auth/metadata.js';
import { authUrls } from '../../auth/urls.js';
import type { StudioProfile } from '../../studio/profile.js';

/** Same as the discovery documents: it only changes with PUBLIC_URL or the studio profile. */
const AUTH_MD_MAX_AGE_SECONDS = 3600;

export const AUTH_MD_PATH = '/auth.md';

export interface AuthMdRouteOptions {
  readonly publicUrl: string;
  readonly profile: StudioProfile;
  /** What this deployment offers: without mail, verified_email and claims are off; without trusted issuers, ID-JAG. */
  readonly features: AuthFeatures;
}

export async function authMdRoute(app: FastifyInstance, { publicUrl, profile, features }: AuthMdRouteOptions) {
  // Built once: the text depends only on configuration read at start-up.
  const text = authMarkdown(authUrls(publicUrl), profile, features);
  app.get(AUTH_MD_PATH, async (_request, reply) =>
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${AUTH_MD_MAX_AGE_SECONDS}`)
      .type('text/markdown; charset=utf-8')
      .send(text),
  );
}

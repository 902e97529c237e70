// GET /openapi.json (docs/api.md), the OpenAPI 3.1.0 description of the whole
// interface, and GET /docs, the interactive reference rendering it. The document is built and
// serialised once at registration: it depends only on configuration read at start-up.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { buildOpenApiDocument } from '../../openapi/document.js';
import { swaggerUiRoutes } from '../../openapi/swagger-ui.js';
import type { StudioProfile } from '../../studio/profile.js';

export const OPENAPI_PATH = '/openapi.json';

/** Same as the discovery documents: it changes only with a deploy, PUBLIC_URL or the profile. */
const OPENAPI_MAX_AGE_SECONDS = 3600;

export async function openApiRoutes(app: FastifyInstance, { config, profile }: { config: Config; profile: StudioProfile }) {
  const body = JSON.stringify(buildOpenApiDocument({ config, profile }));
  // Open to every origin, like the discovery documents: browser-based agents and tools read it.
  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${OPENAPI_MAX_AGE_SECONDS}`)
      .type('application/json; charset=utf-8')
      .send(body),
  );
  await swaggerUiRoutes(app, { https: config.publicUrl.startsWith('https:') });
}

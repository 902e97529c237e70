// The agent-auth doors: POST /agent/register, POST /oauth/token, POST /oauth/revoke. Bodies are
// small (16 KiB), rate-limited per client address; /oauth/* speaks form-encoding (RFC 6749 §4.5)
// and JSON alike.
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../../auth/errors.js';
import type { AgentAuth } from '../../auth/service.js';

/** design/agent-auth.md §1: registration and token bodies are small. */
export const AUTH_BODY_LIMIT_BYTES = 16 * 1024;
/** Per client address. Registrations are rare; tokens last an hour, so a minute's budget is ample. */
export const AUTH_RATE_LIMITS = {
  register: { max: 20, timeWindow: 60 * 60 * 1000 },
  token: { max: 60, timeWindow: 60 * 1000 },
  revoke: { max: 60, timeWindow: 60 * 1000 },
} as const;

const rateLimited = (limit: { max: number; timeWindow: number }) => ({
  ...limit,
  errorResponseBuilder: (_request: unknown, context: { after: string }) =>
    Object.assign(new Error(`Too many requests from this address; try again in ${context.after}.`), { statusCode: 429 }),
});

export async function agentAuthRoutes(app: FastifyInstance, { auth }: { auth: AgentAuth }) {
  // RFC 6749 §3.2: token requests are form-encoded; a parameter sent twice is an invalid request.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const params = new URLSearchParams(body as string);
    const names = [...params.keys()];
    if (new Set(names).size !== names.length) {
      done(new OAuthError('invalid_request', 'a parameter was sent more than once'), undefined);
      return;
    }
    done(null, Object.fromEntries(params));
  });

  app.post(
    '/agent/register',
    { bodyLimit: AUTH_BODY_LIMIT_BYTES, config: { rateLimit: rateLimited(AUTH_RATE_LIMITS.register) } },
    async (request, reply) => {
      const { status, body } = await auth.register(request.body);
      return reply.code(status).header('cache-control', 'no-store').send(body);
    },
  );

  app.post(
    '/oauth/token',
    { bodyLimit: AUTH_BODY_LIMIT_BYTES, config: { rateLimit: rateLimited(AUTH_RATE_LIMITS.token) } },
    async (request, reply) => {
      const response = await auth.token(oauthParams(request.body));
      // RFC 6749 §5.1: token responses are never cached.
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(response);
    },
  );

  app.post(
    '/oauth/revoke',
    { bodyLimit: AUTH_BODY_LIMIT_BYTES, config: { rateLimit: rateLimited(AUTH_RATE_LIMITS.revoke) } },
    async (request, reply) => {
      await auth.revoke(oauthParams(request.body).token);
      return reply.code(200).header('cache-control', 'no-store').send();
    },
  );
}

/** Parameters as strings: a JSON body with a non-string value is an invalid request. */
function oauthParams(body: unknown): Record<string, string | undefined> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'send the parameters form-encoded or as a JSON object');
  }
  const params: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a string`);
    params[name] = value;
  }
  return params;
}

// The agent-auth doors: POST /agent/register, /agent/claim, /oauth/token and /oauth/revoke. Bodies are
// small (16 KiB), rate-limited per client address; /agent/* takes JSON, /oauth/* form-encoding
// (RFC 6749 §4.5) and JSON alike.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { OAuthError } from '../../auth/errors.js';
import { AUTH_BODY_LIMIT_BYTES, AUTH_RATE_LIMITS, type AuthRateLimits, type RateLimit } from '../../auth/limits.js';
import { registerFormParser } from '../form-body.js';

export type { AuthRateLimits } from '../../auth/limits.js';

import type { OAuthTokens } from '../../auth/oauth-tokens.js';
import type { AgentAuth } from '../../auth/service.js';

const rateLimited = (limit: RateLimit) => ({
  ...limit,
  errorResponseBuilder: (_request: unknown, context: { after: string }) =>
    Object.assign(new Error(`Too many requests from this address; try again in ${context.after}.`), { statusCode: 429 }),
});

export async function agentAuthRoutes(
  app: FastifyInstance,
  { auth, oauthTokens, limits = AUTH_RATE_LIMITS }: { auth: AgentAuth; oauthTokens: OAuthTokens; limits?: AuthRateLimits },
) {
  registerFormParser(app);

  const post = (path: string, limit: RateLimit, handler: (body: unknown, reply: FastifyReply) => Promise<unknown>) =>
    app.post(path, { bodyLimit: AUTH_BODY_LIMIT_BYTES, config: { rateLimit: rateLimited(limit) } }, (request, reply) =>
      handler(request.body, reply),
    );
  const answer = (reply: FastifyReply, { status, body }: { status: number; body: unknown }) =>
    reply.code(status).header('cache-control', 'no-store').send(body);

  post('/agent/register', limits.register, async (body, reply) => answer(reply, await auth.register(body)));
  post('/agent/claim', limits.claim, async (body, reply) => answer(reply, await auth.claim(body)));
  post('/oauth/token', limits.token, async (body, reply) => {
    const params = oauthParams(body);
    // authorization_code and refresh_token: the sign-in flow's grants; the others: auth.md's.
    const response = oauthTokens.handles(params.grant_type) ? await oauthTokens.token(params) : await auth.token(params);
    // RFC 6749 §5.1: token responses are never cached.
    return answer(reply.header('pragma', 'no-cache'), { status: 200, body: response });
  });
  post('/oauth/revoke', limits.revoke, async (body, reply) => {
    const { token } = oauthParams(body);
    if (!(token && (await oauthTokens.revoke(token)))) await auth.revoke(token);
    return answer(reply, { status: 200, body: undefined });
  });
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

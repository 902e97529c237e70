// Form-encoded bodies (RFC 6749 §3.2 and the consent page's form), on /oauth/* only: a parameter sent
// twice is an invalid request. Elsewhere the API takes JSON (docs/api.md), so a form is a 415.
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../auth/errors.js';
import { unreadableBody } from './json-body.js';
import { isOAuthRoute, UnsupportedMediaTypeError } from './problems.js';

export function registerFormParser(app: FastifyInstance): void {
  // The matched route, not the URL as sent (absolute-form, percent-encoded: RFC 9112 §3.2).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    if (!isOAuthRoute(request)) {
      done(new UnsupportedMediaTypeError('Send the request body as JSON with Content-Type: application/json.'), undefined);
      return;
    }
    const unreadable = unreadableBody(request, body as Buffer);
    if (unreadable) {
      done(unreadable, undefined);
      return;
    }
    const params = new URLSearchParams((body as Buffer).toString('utf8'));
    const names = [...params.keys()];
    if (new Set(names).size !== names.length) {
      done(new OAuthError('invalid_request', 'a parameter was sent more than once'), undefined);
      return;
    }
    done(null, Object.fromEntries(params));
  });
}

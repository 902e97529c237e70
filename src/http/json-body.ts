// The JSON body parser: Fastify's own (it refuses prototype-poisoning keys), for UTF-8 bodies only.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidBodyError, UnsupportedMediaTypeError } from './problems.js';

/**
 * RFC 8259 §8.1: JSON between systems is UTF-8, and Fastify decodes every body as UTF-8 whatever its
 * charset, so a body declared in another charset (Latin-1 would be stored garbled) gets a 415 that
 * says so. "utf8" is a label of UTF-8 too (WHATWG Encoding).
 */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser<Buffer>('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type'] ?? '');
    if (charset !== undefined && !UTF8_LABELS.has(charset.toLowerCase())) {
      done(
        new UnsupportedMediaTypeError(
          `JSON must be sent in UTF-8 (RFC 8259), not ${charset === '' ? 'an empty charset' : charset.slice(0, 40)}: send Content-Type: application/json or application/json; charset=utf-8.`,
        ),
        undefined,
      );
      return;
    }
    const unreadable = unreadableBody(request, body);
    if (unreadable) {
      done(unreadable, undefined);
      return;
    }
    parseJson(request, body.toString('utf8'), done);
  });
}

/**
 * Why a body cannot be read as the text it was sent as, for every body parser: a content coding
 * (none is decoded: RFC 9110 §8.4, a 415), or bytes that are not UTF-8 (they would be kept as U+FFFD,
 * not as sent: a 400).
 */
export function unreadableBody(request: FastifyRequest, body: Buffer): Error | undefined {
  const coding = request.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    return new UnsupportedMediaTypeError(`Content-Encoding ${coding.slice(0, 40)} is not accepted: send the body uncompressed.`);
  }
  if (!isUtf8(body)) return new InvalidBodyError('The request body is not valid UTF-8.');
  return undefined;
}

/**
 * The charset parameter of a Content-Type (RFC 9110 §8.3.1), unquoted, or undefined. Parameters are
 * read in turn, quoted strings whole, so that `foo="a;charset=latin1"` names no charset; of two
 * charset parameters, one that is not UTF-8 is the answer (the body cannot be both).
 */
function charsetOf(contentType: string): string | undefined {
  let charset: string | undefined;
  for (const [, name = '', quoted, token] of contentType.matchAll(/;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
    if (name.toLowerCase() !== 'charset') continue;
    const value = quoted?.replace(/\\(.)/g, '$1') ?? token ?? '';
    if (charset === undefined || UTF8_LABELS.has(charset.toLowerCase())) charset = value;
  }
  return charset;
}

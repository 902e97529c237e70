// The JSON body parser: Fastify's own (it refuses prototype-poisoning keys), for UTF-8 bodies only.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { InvalidBodyError, UnsupportedMediaTypeError } from './problems.js';

/**
 * RFC 8259 §8.1: JSON exchanged between systems is UTF-8, and Fastify decodes every body as UTF-8
 * whatever its charset says, so a body declared in Latin-1 would be stored garbled and one in
 * UTF-16 refused as invalid JSON. A body declared in any other charset is refused with a 415 that
 * says so. "utf8" is also a label of UTF-8 (WHATWG Encoding), so it is taken too.
 */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser<Buffer>('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // RFC 9110 §8.4: a coding the service does not decode (it decodes none) is a 415, not a body
    // taken as it stands (gzip as garbled JSON, or a plain body under a coding it does not have).
    const coding = request.headers['content-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
      done(
        new UnsupportedMediaTypeError(`Content-Encoding ${coding.slice(0, 40)} is not accepted: send the body uncompressed.`),
        undefined,
      );
      return;
    }
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
    // Bytes that are not UTF-8 would be decoded to U+FFFD: what was sent would not be what is kept.
    if (!isUtf8(body)) {
      done(new InvalidBodyError('The request body is not valid UTF-8 (RFC 8259 §8.1).'), undefined);
      return;
    }
    parseJson(request, body.toString('utf8'), done);
  });
}

/** The charset parameter of a Content-Type (RFC 9110 §8.3.1), unquoted, or undefined. */
function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  return match === null ? undefined : (match[1] ?? match[2]);
}

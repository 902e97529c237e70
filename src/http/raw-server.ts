// What Node's HTTP server answers before Fastify (a request its parser refuses or too slow to arrive,
// an unknown Expect, CONNECT), as problem+json with the security headers and a request id; a refusal
// never overtakes the answers to the requests before it on the same connection.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { clientErrorResponse, PROBLEM_CONTENT_TYPE, problem, rawProblemResponse } from './problems.js';

/**
 * How long a request may take to arrive, headers and body, from its first byte: a 64 KiB body
 * needs only 2 KiB/s. A client that stalls mid-upload would otherwise hold its connection (a
 * socket, memory) for ever: thousands of them starve the service of sockets.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long the headers alone may take (Node's default is a minute). */
export const HEADERS_TIMEOUT_MS = 15_000;
/** How often Node looks for requests past those limits (its default, 30 s, would double them). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** How long a CONNECT's answer may take to be read before its socket is closed regardless. */
const CONNECT_ANSWER_MS = 5_000;

/** Options of Node's HTTP server for these limits (see REQUEST_TIMEOUT_MS); a timeout of at least 1 s. */
export function serverTimeouts(requestTimeoutMs: number) {
  if (!(requestTimeoutMs >= 1_000)) throw new Error(`a request timeout of ${requestTimeoutMs} ms is below 1 s`);
  return {
    headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, requestTimeoutMs),
  };
}

/**
 * The connection-level answers of one server. `refuse` is Fastify's clientErrorHandler; `watch`
 * attaches the rest to the server once it exists.
 */
export class RawAnswers {
  /** Per connection, the requests not yet answered (pipelined ones wait their turn). */
  private readonly unanswered = new WeakMap<Socket, Set<IncomingMessage>>();
  /** Per connection, a refusal waiting for the answers to the requests before it. */
  private readonly pendingRefusal = new WeakMap<Socket, { readonly waitFor: Set<IncomingMessage>; readonly answer: () => void }>();

  constructor(
    private readonly headers: Readonly<Record<string, string>>,
    private readonly logger: Pick<Logger, 'debug'>,
    private readonly requestTimeoutMs: number,
  ) {}

  /**
   * A request Node's parser refused (or too slow to arrive). The whole requests pipelined before it
   * are answered first, in order (RFC 9112 §9.3.2): an inquiry stored is reported. A request still
   * arriving is the refused one, not waited for; nothing is waited for longer than a request may take.
   */
  readonly refuse = (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = randomUUID();
    this.logger.debug({ requestId, code: error.code }, 'request refused by the HTTP parser');
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      this.pendingRefusal.delete(socket);
      if (socket.writable) socket.write(clientErrorResponse(error.code, this.headers, requestId));
      socket.destroy();
    };
    const waitFor = new Set([...(this.unanswered.get(socket) ?? [])].filter((request) => request.complete));
    if (waitFor.size === 0) {
      answer();
      return;
    }
    this.pendingRefusal.set(socket, { waitFor, answer });
    setTimeout(answer, this.requestTimeoutMs).unref();
  };

  watch(server: Server): void {
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const { socket } = request;
      const unanswered = this.unanswered.get(socket) ?? new Set();
      this.unanswered.set(socket, unanswered);
      unanswered.add(request);
      response.once('close', () => {
        unanswered.delete(request);
        const refusal = this.pendingRefusal.get(socket);
        if (refusal === undefined) return;
        refusal.waitFor.delete(request);
        if (refusal.waitFor.size === 0) refusal.answer();
      });
    });
    // Node answers an Expect other than 100-continue with a bare 417 (RFC 9110 §10.1.1).
    server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
      const requestId = randomUUID();
      const detail = 'Only "Expect: 100-continue" is understood here; send the request without this Expect header.';
      const body = JSON.stringify({ ...problem(417, 'invalid_request', detail), requestId });
      response
        .writeHead(417, {
          ...this.headers,
          'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
          'content-length': Buffer.byteLength(body),
          'x-request-id': requestId,
          connection: 'close',
        })
        .end(body);
    });
    // CONNECT asks for a tunnel, which an origin server does not offer (Node closed the socket
    // silently). The socket is ours now, without Node's error handler or timeouts: an error on it
    // (the client reset it) must not be thrown, and it is closed once answered, or after a while.
    server.on('connect', (_request: IncomingMessage, socket: Socket) => {
      socket.on('error', () => {});
      const answer = problem(501, 'not_implemented', 'CONNECT is not served here: this is no proxy.');
      socket.end(rawProblemResponse(answer, this.headers, randomUUID()), () => socket.destroy());
      setTimeout(() => socket.destroy(), CONNECT_ANSWER_MS).unref();
    });
  }
}

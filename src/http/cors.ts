// The API's CORS rules for pages of the CORS_ORIGINS: each endpoint's preflight advertises only the
// methods it serves and the request headers it reads (/mcp and /mcp/verified: no sessions, so no
// Mcp-Session-Id or Last-Event-ID; GET and DELETE answer 405 there and at /api/contact, so are not offered).
import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { PREFLIGHT_MAX_AGE_SECONDS } from './public-documents.js';

interface EndpointCors {
  readonly methods: readonly string[];
  readonly allowedHeaders: readonly string[];
}

/** The MCP transport's headers (2025-06-18 MCP-Protocol-Version; 2026-07-28 also Mcp-Method, Mcp-Name). */
export const MCP_CORS: EndpointCors = {
  methods: ['POST'],
  allowedHeaders: ['Content-Type', 'Authorization', 'Mcp-Protocol-Version', 'Mcp-Method', 'Mcp-Name'],
};
/** Altcha and Honeypot: the contact page's signals (docs/api.md), which a page of an allowed origin may send too. */
export const CONTACT_CORS: EndpointCors = {
  methods: ['POST'],
  allowedHeaders: ['Content-Type', 'Authorization', 'Idempotency-Key', 'Altcha', 'Honeypot'],
};
/** Every other API endpoint (the proof-of-work challenge, agent auth): GET or POST, JSON or a form, a token. */
const OTHER_CORS: EndpointCors = { methods: ['GET', 'POST'], allowedHeaders: ['Content-Type', 'Authorization'] };

const BY_PATH: Record<string, EndpointCors> = { '/mcp': MCP_CORS, '/mcp/verified': MCP_CORS, '/api/contact': CONTACT_CORS };

export function corsOptions(corsOrigins: Config['corsOrigins'], exposedHeaders: readonly string[]): FastifyCorsOptions {
  const origin = corsOrigins === '*' ? '*' : [...corsOrigins];
  const optionsFor = ({ methods, allowedHeaders }: EndpointCors): FastifyCorsOptions => ({
    origin,
    methods: [...methods],
    allowedHeaders: [...allowedHeaders],
    exposedHeaders: [...exposedHeaders],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  });
  const byPath = new Map(Object.entries(BY_PATH).map(([path, rules]) => [path, optionsFor(rules)]));
  const other = optionsFor(OTHER_CORS);
  return { delegator: async (request: FastifyRequest) => byPath.get(request.url.split('?', 1)[0] ?? '') ?? other };
}

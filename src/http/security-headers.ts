// Security headers from helmet, computed once. @fastify/helmet rebuilds helmet's middleware on every
// request (its CSP directives included), which cost more than the health endpoint's whole work; the
// headers never vary per request here (no CSP nonces), so they are worked out at start-up and set
// with one call per response.
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

export function securityHeaders(https: boolean): Readonly<Record<string, string>> {
  const options: HelmetOptions = {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'"],
        scriptSrc: ["'self'"],
        // Asking browsers to upgrade only makes sense where the service is served over TLS.
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    strictTransportSecurity: https,
  };
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}

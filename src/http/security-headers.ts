// Security headers from helmet, computed once at start-up and set with one call per response: they
// never vary per request (no CSP nonces), and @fastify/helmet would rebuild them on every request.
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

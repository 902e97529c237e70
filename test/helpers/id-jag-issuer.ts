// A real ID-JAG issuer for tests: its own ES256 key pair, its JWKS served over HTTP on 127.0.0.1,
// and ID-JAGs signed with jose (draft-ietf-oauth-identity-assertion-authz-grant §3).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface IdJagIssuer {
  /** The issuer identifier (`iss`): the server's base URL. */
  readonly issuer: string;
  readonly jwksUrl: string;
  /** How many times the JWKS was fetched. */
  readonly jwksRequests: number;
  /**
   * Signs an ID-JAG for `audience` with valid defaults (sub, jti, iat, exp in 5 minutes, client_id);
   * `claims` overrides or, with `undefined`, removes a claim; `header` overrides the protected header.
   */
  sign(audience: string, claims?: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startIdJagIssuer(): Promise<IdJagIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  let jwksRequests = 0;
  const server = createServer((request, response) => {
    if (request.url !== '/jwks.json') return void response.writeHead(404).end();
    jwksRequests += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    get jwksRequests() {
      return jwksRequests;
    },
    async sign(audience, claims = {}, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = {
        iss: issuer,
        sub: 'user-1234',
        aud: audience,
        client_id: 'agent-client',
        jti: randomUUID(),
        iat: now,
        exp: now + 300,
        ...claims,
      };
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
      return new SignJWT(payload as JWTPayload)
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'oauth-id-jag+jwt', ...header })
        .sign(privateKey);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

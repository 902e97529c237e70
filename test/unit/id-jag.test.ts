// ID-JAG verification against a real issuer (own ES256 keys, JWKS served over HTTP on 127.0.0.1):
// signature, typ, alg, iss, aud, dates, required claims and replay, plus the real SQLite replay store.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AssertionError, CLOCK_TOLERANCE_SECONDS, createIdJagVerifier, type IdJagVerifierOptions } from '../../src/auth/id-jag.js';
import { authUrls } from '../../src/auth/urls.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type IdJagIssuer, startIdJagIssuer } from '../helpers/id-jag-issuer.js';

const AUDIENCE = 'https://studio.example';
const seconds = () => Math.floor(Date.now() / 1000);

let issuer: IdJagIssuer;
let otherIssuer: IdJagIssuer;
beforeAll(async () => {
  issuer = await startIdJagIssuer();
  otherIssuer = await startIdJagIssuer();
});
afterAll(async () => {
  await issuer.close();
  await otherIssuer.close();
});

/** The in-memory stand-in for AuthStore.useAssertion: (issuer, jti) is accepted once. */
function memoryReplayStore() {
  const seen = new Set<string>();
  return async (iss: string, jti: string) => {
    const key = JSON.stringify([iss, jti]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
}

function verifier(overrides: Partial<IdJagVerifierOptions> = {}) {
  return createIdJagVerifier({
    audience: AUDIENCE,
    trustedIssuers: { [issuer.issuer]: issuer.jwksUrl },
    useAssertion: memoryReplayStore(),
    ...overrides,
  });
}

/** Expects the rejection `code`, and that the client-facing message echoes no part of the token. */
async function rejection(promise: Promise<unknown>, code: AssertionError['code'], token: string): Promise<AssertionError> {
  const error = await promise.then(
    () => expect.fail('the assertion was accepted'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AssertionError);
  const assertionError = error as AssertionError;
  expect(assertionError.code).toBe(code);
  if (token.length >= 8) expect(assertionError.message).not.toContain(token);
  for (const segment of token.split('.')) if (segment.length >= 8) expect(assertionError.message).not.toContain(segment);
  return assertionError;
}

/** An unsecured JWT (RFC 7519 §6): header and payload, empty signature. */
function unsecuredJwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
  return `${encode({ alg: 'none', typ: 'oauth-id-jag+jwt' })}.${encode(payload)}.`;
}

describe('a valid ID-JAG', () => {
  it('is verified and its claims returned', async () => {
    const exp = seconds() + 300;
    const token = await issuer.sign(AUDIENCE, { jti: 'jti-valid', exp, email: 'ada@example.com', scope: 'inquiry:write' });
    await expect(verifier().verify(token)).resolves.toEqual({
      issuer: issuer.issuer,
      subject: 'user-1234',
      clientId: 'agent-client',
      email: 'ada@example.com',
      jti: 'jti-valid',
      expiresAt: new Date(exp * 1000),
      scope: 'inquiry:write',
    });
  });

  it('accepts aud as an array containing this service, and omits the optional claims as null', async () => {
    const token = await issuer.sign(AUDIENCE, { aud: ['https://other.example', AUDIENCE] });
    const verified = await verifier().verify(token);
    expect(verified).toMatchObject({ clientId: 'agent-client', email: null, scope: null });
  });

  it('requires client_id (draft §3)', async () => {
    const token = await issuer.sign(AUDIENCE, { client_id: undefined });
    await expect(verifier().verify(token)).rejects.toMatchObject({ code: 'invalid_assertion' });
  });

  it('accepts the typ with an application/ prefix (RFC 7515 §4.1.9)', async () => {
    const token = await issuer.sign(AUDIENCE, {}, { typ: 'application/oauth-id-jag+jwt' });
    await expect(verifier().verify(token)).resolves.toMatchObject({ subject: 'user-1234' });
  });

  it(`tolerates ${CLOCK_TOLERANCE_SECONDS} s of clock skew on exp`, async () => {
    const token = await issuer.sign(AUDIENCE, { iat: seconds() - 300, exp: seconds() - 10 });
    await expect(verifier().verify(token)).resolves.toMatchObject({ subject: 'user-1234' });
  });

  it('fetches the JWKS once for many assertions', async () => {
    const fresh = await startIdJagIssuer();
    try {
      const verify = verifier({ trustedIssuers: { [fresh.issuer]: fresh.jwksUrl } });
      for (let i = 0; i < 3; i += 1) await verify.verify(await fresh.sign(AUDIENCE));
      expect(fresh.jwksRequests).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});

describe('claims', () => {
  it('rejects a wrong aud, saying which aud is expected', async () => {
    const token = await issuer.sign('https://elsewhere.example');
    const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
    expect(error.message).toBe(`the assertion's aud must be ${AUDIENCE}`);
  });

  it('rejects a claim with the NUL character, which no database field may hold', async () => {
    for (const claim of ['sub', 'jti', 'client_id', 'email', 'scope']) {
      const token = await issuer.sign(AUDIENCE, { [claim]: 'one\u0000two' });
      const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
      expect(error.message).toBe(`the assertion's ${claim} must not contain the NUL character`);
    }
  });

  it('rejects a claim with a lone surrogate, which neither database keeps as sent', async () => {
    for (const claim of ['sub', 'jti', 'client_id', 'email']) {
      const token = await issuer.sign(AUDIENCE, { [claim]: 'one\ud800two' });
      const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
      expect(error.message).toBe(`the assertion's ${claim} must be Unicode text (it has a lone surrogate)`);
    }
    await expect(verifier().verify(await issuer.sign(AUDIENCE, { sub: 'user-\u{1F600}' }))).resolves.toMatchObject({
      subject: 'user-\u{1F600}',
    });
  });

  it('rejects an expired assertion', async () => {
    const token = await issuer.sign(AUDIENCE, { iat: seconds() - 600, exp: seconds() - 60 });
    const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
    expect(error.message).toMatch(/expired/);
  });

  it('rejects an assertion that is not yet valid (nbf or iat in the future)', async () => {
    const notBefore = await issuer.sign(AUDIENCE, { nbf: seconds() + 120 });
    expect((await rejection(verifier().verify(notBefore), 'invalid_assertion', notBefore)).message).toMatch(/not yet valid/);
    const issuedLater = await issuer.sign(AUDIENCE, { iat: seconds() + 120, exp: seconds() + 600 });
    expect((await rejection(verifier().verify(issuedLater), 'invalid_assertion', issuedLater)).message).toMatch(/not yet valid/);
  });

  it('uses the injected clock', async () => {
    const token = await issuer.sign(AUDIENCE);
    const inAnHour = () => new Date(Date.now() + 3_600_000);
    await rejection(verifier({ now: inAnHour }).verify(token), 'invalid_assertion', token);
  });

  for (const claim of ['sub', 'jti', 'iat', 'exp', 'aud']) {
    it(`rejects an assertion without ${claim}`, async () => {
      const token = await issuer.sign(AUDIENCE, { [claim]: undefined });
      const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
      expect(error.message).toContain(claim);
    });
  }

  it('rejects an empty sub and a client_id or email that is not a string', async () => {
    for (const claims of [{ sub: '' }, { client_id: 42 }, { email: ['a@example.com'] }]) {
      const token = await issuer.sign(AUDIENCE, claims);
      await rejection(verifier().verify(token), 'invalid_assertion', token);
    }
  });
});

describe('header and signature', () => {
  it('rejects a typ other than oauth-id-jag+jwt, or none', async () => {
    for (const typ of ['JWT', 'at+jwt', undefined]) {
      const token = await issuer.sign(AUDIENCE, {}, { typ });
      const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
      expect(error.message).toBe("the assertion's typ header must be oauth-id-jag+jwt");
    }
  });

  it('rejects alg none (an unsecured JWT)', async () => {
    const now = seconds();
    const token = unsecuredJwt({ iss: issuer.issuer, sub: 'user-1234', aud: AUDIENCE, jti: 'none-1', iat: now, exp: now + 300 });
    const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
    expect(error.message).toMatch(/alg must be one of/);
  });

  it('rejects HS256, even with a secret the verifier could guess', async () => {
    const secret = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!');
    const token = await new SignJWT({ sub: 'user-1234', aud: AUDIENCE, jti: 'hs-1' })
      .setProtectedHeader({ alg: 'HS256', typ: 'oauth-id-jag+jwt' })
      .setIssuer(issuer.issuer)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(secret);
    await rejection(verifier().verify(token), 'invalid_assertion', token);
  });

  it('rejects a signature by a key that is not in the JWKS (same kid, or unknown kid)', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const kid = JSON.parse(new TextDecoder().decode(base64url.decode((await issuer.sign(AUDIENCE)).split('.')[0] ?? ''))).kid;
    for (const headerKid of [kid, 'unknown-kid']) {
      const token = await new SignJWT({ sub: 'user-1234', aud: AUDIENCE, jti: `forged-${headerKid}` })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: headerKid })
        .setIssuer(issuer.issuer)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      await rejection(verifier().verify(token), 'invalid_assertion', token);
    }
  });

  it('rejects a tampered payload', async () => {
    const [head, , signature] = (await issuer.sign(AUDIENCE)).split('.');
    const payload = base64url.encode(
      JSON.stringify({ iss: issuer.issuer, sub: 'admin', aud: AUDIENCE, jti: 'x', iat: seconds(), exp: seconds() + 60 }),
    );
    const token = `${head}.${payload}.${signature}`;
    const error = await rejection(verifier().verify(token), 'invalid_assertion', token);
    expect(error.message).toBe("the assertion's signature is not valid");
  });

  it('rejects garbage', async () => {
    for (const token of ['garbage-that-is-no-jwt', '', 'a.b.c', 'eyJhbGciOiJFUzI1NiJ9.e30']) {
      await rejection(verifier().verify(token), 'invalid_assertion', token);
    }
  });

  it('answers invalid_assertion, without internal details, when the JWKS cannot be fetched', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/jwks.json`;
    await new Promise((resolve) => closed.close(resolve));
    const token = await issuer.sign(AUDIENCE);
    const error = await rejection(verifier({ trustedIssuers: { [issuer.issuer]: jwksUrl } }).verify(token), 'invalid_assertion', token);
    expect(error.message).toMatch(/keys are unavailable/);
    expect(error.message).not.toContain('127.0.0.1');
  });
});

describe('issuers', () => {
  it('answers issuer_not_enabled for an issuer that is not trusted', async () => {
    const token = await otherIssuer.sign(AUDIENCE);
    await rejection(verifier().verify(token), 'issuer_not_enabled', token);
  });

  it('answers issuer_not_enabled for every assertion when no issuer is trusted', async () => {
    const token = await issuer.sign(AUDIENCE);
    const verify = verifier({ trustedIssuers: {} });
    await rejection(verify.verify(token), 'issuer_not_enabled', token);
    await rejection(verify.verify('garbage'), 'issuer_not_enabled', 'garbage');
  });

  it('does not trust an issuer through the prototype chain', async () => {
    const token = await issuer.sign(AUDIENCE, { iss: 'constructor' });
    await rejection(verifier().verify(token), 'issuer_not_enabled', token);
  });
});

describe('replay', () => {
  it('answers replay_detected for the second use of a jti', async () => {
    const verify = verifier();
    const token = await issuer.sign(AUDIENCE);
    await verify.verify(token);
    await rejection(verify.verify(token), 'replay_detected', token);
  });

  it('records a jti only once the assertion is valid', async () => {
    const verify = verifier();
    const expired = await issuer.sign(AUDIENCE, { jti: 'jti-shared', iat: seconds() - 600, exp: seconds() - 60 });
    await rejection(verify.verify(expired), 'invalid_assertion', expired);
    await expect(verify.verify(await issuer.sign(AUDIENCE, { jti: 'jti-shared' }))).resolves.toMatchObject({ jti: 'jti-shared' });
  });

  it('keys replay by issuer and jti', async () => {
    const verify = verifier({ trustedIssuers: { [issuer.issuer]: issuer.jwksUrl, [otherIssuer.issuer]: otherIssuer.jwksUrl } });
    await verify.verify(await issuer.sign(AUDIENCE, { jti: 'same-jti' }));
    await expect(verify.verify(await otherIssuer.sign(AUDIENCE, { jti: 'same-jti' }))).resolves.toMatchObject({ jti: 'same-jti' });
  });

  it('records the jti until exp plus the clock tolerance', async () => {
    const recorded: Date[] = [];
    const exp = seconds() + 300;
    const verify = verifier({ useAssertion: async (_iss, _jti, expiresAt) => recorded.push(expiresAt) > 0 });
    await verify.verify(await issuer.sign(AUDIENCE, { exp }));
    expect(recorded).toEqual([new Date((exp + CLOCK_TOLERANCE_SECONDS) * 1000)]);
  });

  describe('with the real SQLite store', () => {
    let testApp: TestApp;
    afterEach(async () => {
      await testApp?.close();
    });

    it('detects a replay across two verifiers (two instances) sharing the database', async () => {
      testApp = await startTestApp({ env: { TRUSTED_ISSUERS: JSON.stringify({ [issuer.issuer]: issuer.jwksUrl }) } });
      const options: IdJagVerifierOptions = {
        audience: authUrls(testApp.config.publicUrl).issuer,
        trustedIssuers: testApp.config.trustedIssuers,
        useAssertion: (iss, jti, expiresAt) => testApp.services.store.auth.useAssertion(iss, jti, expiresAt),
      };
      const token = await issuer.sign(options.audience, { jti: 'sqlite-jti' });
      await expect(createIdJagVerifier(options).verify(token)).resolves.toMatchObject({ jti: 'sqlite-jti' });
      await rejection(createIdJagVerifier(options).verify(token), 'replay_detected', token);
      expect(await testApp.services.store.auth.useAssertion(issuer.issuer, 'sqlite-jti', new Date())).toBe(false);
    });
  });
});

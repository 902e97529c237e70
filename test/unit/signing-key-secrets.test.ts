// Token-signing private keys sealed at rest with SIGNING_KEY_SECRET, on each backend: stored sealed
// and read back, a wrong or missing secret refused, keys in clear sealed, and the secret rotated.
import { describe, expect, it } from 'vitest';
import { decryptPrivateKey, encryptPrivateKey, KeySecretError } from '../../src/auth/key-encryption.js';
import { SigningKeys } from '../../src/auth/keys.js';
import { parseKeySecrets } from '../../src/config/secrets.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';

const SECRET = 'correct horse battery staple 42';
const OTHER = 'another secret of enough length';
const verifyOptions = { typ: 'at+jwt', issuer: 'https://studio.example', audience: 'https://studio.example/' };
const sign = (keys: SigningKeys) =>
  keys.sign({ iss: verifyOptions.issuer, aud: verifyOptions.audience, sub: 'agt_x' }, { typ: 'at+jwt', expiresInSeconds: 60 });
const secrets = (secret: string | null, previous: string | null = null) => ({ secret, previous });

describe('sealing a private key', () => {
  it('opens with the secret it was sealed with, and with no other', () => {
    const sealed = encryptPrivateKey('{"d":"private"}', SECRET);
    expect(sealed).toMatch(/^enc:v1:/);
    expect(sealed).not.toContain('private');
    expect(encryptPrivateKey('{"d":"private"}', SECRET)).not.toBe(sealed); // a fresh salt and nonce each time
    expect(decryptPrivateKey(sealed, [OTHER, SECRET])).toBe('{"d":"private"}');
    expect(() => decryptPrivateKey(sealed, [OTHER])).toThrow(KeySecretError);
    expect(() => decryptPrivateKey(sealed, [])).toThrow(/^SIGNING_KEY_SECRET: the token-signing keys in the database are encrypted/);
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    expect(() => decryptPrivateKey(tampered, [SECRET])).toThrow(/^SIGNING_KEY_SECRET: does not open/);
    expect(decryptPrivateKey('{"d":"clear"}', [])).toBe('{"d":"clear"}');
  });

  it('takes secrets of 16 characters or more, and a previous one only beside a new one', () => {
    expect(parseKeySecrets(undefined, undefined)).toEqual(secrets(null));
    expect(parseKeySecrets(SECRET, OTHER)).toEqual(secrets(SECRET, OTHER));
    expect(() => parseKeySecrets('short', undefined)).toThrow(/^SIGNING_KEY_SECRET: is 5 characters long/);
    expect(() => parseKeySecrets(undefined, OTHER)).toThrow(/^SIGNING_KEY_SECRET_PREVIOUS: is set but SIGNING_KEY_SECRET is not/);
  });
});

describe.each(BACKENDS)('signing keys with SIGNING_KEY_SECRET on $name', ({ fresh }) => {
  const stores = storePerTest(fresh);
  const stored = async (store: Awaited<ReturnType<typeof stores.open>>['store']) =>
    (await store.auth.signingKeys()).map((key) => key.privateJwk);

  it('stores the private key sealed, reads it back with the secret, and refuses a wrong or missing one', async () => {
    const { store } = await stores.open();
    const keys = await SigningKeys.load(store, new Date(), Date.now, secrets(SECRET));
    const token = await sign(keys);
    const [privateJwk = ''] = await stored(store);
    expect(privateJwk).toMatch(/^enc:v1:/);
    expect(privateJwk).not.toMatch(/"d"/);
    const again = await SigningKeys.load(store, new Date(), Date.now, secrets(SECRET));
    expect((await again.verify(token, verifyOptions)).payload.sub).toBe('agt_x');
    await expect(SigningKeys.load(store, new Date(), Date.now, secrets(OTHER))).rejects.toThrow(/^SIGNING_KEY_SECRET: does not open/);
    await expect(SigningKeys.load(store, new Date(), Date.now, secrets(null))).rejects.toThrow(/^SIGNING_KEY_SECRET: .* are encrypted/);
  });

  it('seals keys stored in clear once a secret is set, and seals them anew when the secret is rotated', async () => {
    const { store } = await stores.open();
    const clear = await SigningKeys.load(store);
    const token = await sign(clear);
    expect((await stored(store))[0]).toMatch(/^\{/);
    await SigningKeys.load(store, new Date(), Date.now, secrets(SECRET));
    const [sealedOnce = ''] = await stored(store);
    expect(decryptPrivateKey(sealedOnce, [SECRET])).toMatch(/"d"/);
    // Rotated: the new secret, with the old one as the previous.
    const rotated = await SigningKeys.load(store, new Date(), Date.now, secrets(OTHER, SECRET));
    expect((await rotated.verify(token, verifyOptions)).payload.sub).toBe('agt_x');
    const [sealedAnew = ''] = await stored(store);
    expect(decryptPrivateKey(sealedAnew, [OTHER])).toMatch(/"d"/);
    expect(() => decryptPrivateKey(sealedAnew, [SECRET])).toThrow(KeySecretError);
    await expect(SigningKeys.load(store, new Date(), Date.now, secrets(OTHER))).resolves.toBeInstanceOf(SigningKeys);
  });
});

// Signing keys on a real SQLite store: made once, shared by every instance, rotation-ready.
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/auth/keys.js';
import { openDatabase } from '../../src/storage/database.js';
import { createStore, type Store, type Tx } from '../../src/storage/store.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { BACKENDS } from '../helpers/databases.js';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

const verifyOptions = { typ: 'at+jwt', issuer: 'https://studio.example', audience: 'https://studio.example/' };
const sign = (keys: SigningKeys) =>
  keys.sign({ iss: verifyOptions.issuer, aud: verifyOptions.audience, sub: 'agt_x' }, { typ: 'at+jwt', expiresInSeconds: 60 });

describe('signing keys', () => {
  it('are made once: a second instance on the same database loads the same key', async () => {
    testApp = await startTestApp({ startWorker: false });
    const other = await SigningKeys.load(testApp.services.store);
    expect(other.publicJwks()).toEqual(testApp.services.keys.publicJwks());
    expect((await other.verify(await sign(testApp.services.keys), verifyOptions)).payload.sub).toBe('agt_x');
  });

  it('rotate: a newer key signs, the older keeps verifying, and an instance that has not reloaded still verifies', async () => {
    testApp = await startTestApp({ startWorker: false });
    const before = await sign(testApp.services.keys);
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    await testApp.services.store.auth.addSigningKey({
      kid,
      privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }),
      publicJwk: JSON.stringify({ ...publicJwk, kid, alg: 'ES256', use: 'sig' }),
      createdAt: new Date(Date.now() + 1000),
    });
    const rotated = await SigningKeys.load(testApp.services.store);
    expect(rotated.publicJwks().keys.map((key) => key.kid)).toEqual([kid, testApp.services.keys.publicJwks().keys[0]?.kid]);
    const after = await sign(rotated);
    expect((await rotated.verify(before, verifyOptions)).protectedHeader.kid).not.toBe(kid);
    // The running instance has never seen the new kid: it looks it up in the database once.
    expect((await testApp.services.keys.verify(after, verifyOptions)).protectedHeader.kid).toBe(kid);
  });
});

describe('unknown kids', () => {
  it('make an instance read the key table at most once per cooldown', async () => {
    testApp = await startTestApp({ startWorker: false });
    let reads = 0;
    const counting = {
      ...testApp.services.store.auth,
      signingKeys: async (tx?: Tx) => {
        reads++;
        return testApp.services.store.auth.signingKeys(tx);
      },
    };
    const keys = await SigningKeys.load({ ...testApp.services.store, auth: counting });
    const { privateKey } = await generateKeyPair('ES256');
    const { SignJWT } = await import('jose');
    const forged = await new SignJWT({ iss: verifyOptions.issuer, aud: verifyOptions.audience, sub: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid: 'made-up', typ: 'at+jwt' })
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(privateKey);
    const before = reads;
    for (let i = 0; i < 5; i++) await expect(keys.verify(forged, verifyOptions)).rejects.toThrow();
    expect(reads - before).toBe(1);
  });
});

describe.each(BACKENDS)('instances starting together on an empty $name database', ({ fresh }) => {
  it('make one signing key between them, and all sign with it', async () => {
    const database = await fresh();
    const stores: Store[] = [];
    for (let i = 0; i < 5; i++) stores.push(createStore(await openDatabase(database.config)));
    try {
      const loaded = await Promise.all(stores.map((store) => SigningKeys.load(store)));
      const kids = loaded.map((keys) => keys.publicJwks().keys.map((key) => key.kid));
      expect(kids[0]).toHaveLength(1);
      for (const each of kids) expect(each).toEqual(kids[0]);
      expect(await stores[0]?.auth.signingKeys()).toHaveLength(1);
    } finally {
      for (const store of stores) await store.close();
      await database.drop();
    }
  });
});

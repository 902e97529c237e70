// Signing keys on a real SQLite store: made once, shared by every instance, rotation-ready.
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_REFRESH_MS, SigningKeys } from '../../src/auth/keys.js';
import { openDatabase } from '../../src/storage/database.js';
import type { Store, Tx } from '../../src/storage/ports.js';
import { createStore } from '../../src/storage/store.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { BACKENDS } from '../helpers/databases.js';

let testApp: TestApp;
afterEach(async () => {
  await testApp?.close();
});

const verifyOptions = { typ: 'at+jwt', issuer: 'https://studio.example', audience: 'https://studio.example/' };
const sign = (keys: SigningKeys) =>
  keys.sign({ iss: verifyOptions.issuer, aud: verifyOptions.audience, sub: 'agt_x' }, { typ: 'at+jwt', expiresInSeconds: 60 });

/** A new ES256 key as the table holds it, made `createdAt`. */
async function keyRecord(createdAt: Date) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }),
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg: 'ES256', use: 'sig' }),
    createdAt,
  };
}

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
    const { kid, ...record } = await keyRecord(new Date(Date.now() + 1000));
    await testApp.services.store.auth.addSigningKey({ kid, ...record });
    const rotated = await SigningKeys.load(testApp.services.store);
    expect(rotated.publicJwks().keys.map((key) => key.kid)).toEqual([kid, testApp.services.keys.publicJwks().keys[0]?.kid]);
    const after = await sign(rotated);
    expect((await rotated.verify(before, verifyOptions)).protectedHeader.kid).not.toBe(kid);
    // The running instance has never seen the new kid: it looks it up in the database once.
    expect((await testApp.services.keys.verify(after, verifyOptions)).protectedHeader.kid).toBe(kid);
  });
});

describe('a running instance', () => {
  it('reads the keys again once its copy is a minute old: a key retired elsewhere stops verifying, a new one signs', async () => {
    testApp = await startTestApp({ startWorker: false });
    let time = 0;
    const keys = await SigningKeys.load(testApp.services.store, new Date(), () => time);
    const old = await sign(keys);
    const oldKid = keys.publicJwks().keys[0]?.kid;
    // Another instance (or an operator) rotates: a newer key, and the old one retired.
    const newer = await keyRecord(new Date(Date.now() + 1000));
    await testApp.services.store.auth.addSigningKey(newer);
    const opened = await openDatabase({ kind: 'sqlite', path: join(testApp.dir, 'studio.db') });
    await opened.db
      .updateTable('signing_keys')
      .set({ retired_at: Date.now() })
      .where('kid', '=', oldKid ?? '')
      .execute();
    await opened.db.destroy();

    time = KEY_REFRESH_MS - 1;
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([oldKid]);
    time = KEY_REFRESH_MS; // from this use on, the copy is read again in the background
    await vi.waitUntil(() => keys.publicJwks().keys[0]?.kid === newer.kid, { timeout: 5_000, interval: 10 });
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([newer.kid]);
    await expect(keys.verify(old, verifyOptions)).rejects.toThrow();
    expect((await keys.verify(await sign(keys), verifyOptions)).protectedHeader.kid).toBe(newer.kid);
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

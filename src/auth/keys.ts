// The service's ES256 signing keys: made on first start and kept in the database, so every instance
// signs and verifies alike (docs/agent-auth.md). Several keys may be published at once, which
// is what rotation needs: a new key signs, the old one keeps verifying until it is retired.
import type { KeyObject, webcrypto } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTVerifyResult,
  jwtVerify,
  SignJWT,
} from 'jose';
import type { AuthStore, Store } from '../storage/ports.js';
import { decryptPrivateKey, encryptPrivateKey, isEncrypted } from './key-encryption.js';

/** SIGNING_KEY_SECRET and SIGNING_KEY_SECRET_PREVIOUS: what seals the private keys at rest, if anything. */
export interface KeySecrets {
  readonly secret: string | null;
  /** The secret before a rotation: keys it opens are sealed again with `secret` at start. */
  readonly previous: string | null;
}

const NO_SECRETS: KeySecrets = { secret: null, previous: null };

type CryptoKey = webcrypto.CryptoKey;

export const SIGNING_ALGORITHM = 'ES256';
/** At most one look at the key table per this interval for kids this instance does not know. */
const KEY_RELOAD_COOLDOWN_MS = 30_000;
/**
 * A running instance reads the key table again, in the background, once its copy is this old: a key
 * added (by another instance, or by an operator rotating keys) is published and signs everywhere,
 * and a key retired stops verifying everywhere, within about a minute, not at the next restart.
 */
export const KEY_REFRESH_MS = 60_000;

interface LoadedKey {
  readonly kid: string;
  readonly privateKey: KeyObject | CryptoKey;
  readonly publicJwk: JWK;
}

export class SigningKeys {
  private keys: LoadedKey[] = [];
  private jwks: JSONWebKeySet = { keys: [] };
  private verifyWith = createLocalJWKSet(this.jwks);
  private reloadedAt = 0;
  /** When the keys were last read (clock()), and the background read under way, if any. */
  private loadedAt = 0;
  private refreshing: Promise<void> | undefined;

  private constructor(
    private readonly store: Pick<AuthStore, 'signingKeys' | 'addSigningKey'>,
    private readonly clock: () => number,
    private readonly secrets: KeySecrets,
  ) {}

  /**
   * Loads the keys, creating the first one if the database has none: under a lock, so that
   * instances starting together on an empty database make one key between them, not one each.
   */
  static async load(
    store: Pick<Store, 'auth' | 'transaction'>,
    now = new Date(),
    clock: () => number = Date.now,
    secrets: KeySecrets = NO_SECRETS,
  ): Promise<SigningKeys> {
    const keys = new SigningKeys(store.auth, clock, secrets);
    await keys.reload();
    if (secrets.secret !== null) await reseal(store, { ...secrets, secret: secrets.secret });
    if (keys.keys.length === 0) {
      const first = await newKey(now, secrets.secret);
      await store.transaction(
        async (tx) => {
          if ((await store.auth.signingKeys(tx)).length === 0) await store.auth.addSigningKey(first, tx);
        },
        { lock: ['signing-keys'] },
      );
      await keys.reload();
    }
    return keys;
  }

  /** The public keys, as served at /.well-known/jwks.json. */
  publicJwks(): JSONWebKeySet {
    this.refreshIfStale();
    return this.jwks;
  }

  /**
   * Starts reading the keys again if this copy is KEY_REFRESH_MS old; the current ones serve
   * meanwhile, and stay if the read fails (the database away), to be tried again at the next use.
   */
  private refreshIfStale(): void {
    if (this.refreshing !== undefined || this.clock() - this.loadedAt < KEY_REFRESH_MS) return;
    this.refreshing = this.reload()
      .catch(() => {})
      .finally(() => {
        this.refreshing = undefined;
      });
  }

  async sign(payload: JWTPayload, options: { typ: string; expiresInSeconds: number; now?: Date }): Promise<string> {
    this.refreshIfStale();
    const [current] = this.keys;
    if (!current) throw new Error('no signing key');
    const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: current.kid, typ: options.typ })
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + options.expiresInSeconds)
      .sign(current.privateKey);
  }

  /** Verifies a JWT this service signed; a key another instance made since start is looked up once. */
  async verify(token: string, options: { typ: string; issuer: string; audience: string | string[] }): Promise<JWTVerifyResult> {
    const verifyOptions = { algorithms: [SIGNING_ALGORITHM], typ: options.typ, issuer: options.issuer, audience: options.audience };
    this.refreshIfStale();
    try {
      return await jwtVerify(token, this.verifyWith, verifyOptions);
    } catch (error) {
      // An unknown kid may be a key another instance just made; look, but not more often than the
      // cooldown allows, so made-up kids cannot make every request read the key table.
      const recently = Date.now() - this.reloadedAt < KEY_RELOAD_COOLDOWN_MS;
      if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || recently) throw error;
      this.reloadedAt = Date.now();
      await this.reload();
      return jwtVerify(token, this.verifyWith, verifyOptions);
    }
  }

  private async reload(): Promise<void> {
    const readAt = this.clock();
    const records = await this.store.signingKeys();
    this.keys = await Promise.all(
      records.map(async (record) => ({
        kid: record.kid,
        privateKey: (await importJWK(JSON.parse(decryptPrivateKey(record.privateJwk, this.openWith())), SIGNING_ALGORITHM)) as
          | KeyObject
          | CryptoKey,
        publicJwk: JSON.parse(record.publicJwk) as JWK,
      })),
    );
    this.jwks = { keys: this.keys.map((key) => key.publicJwk) };
    this.verifyWith = createLocalJWKSet(this.jwks);
    this.loadedAt = readAt;
  }

  private openWith(): string[] {
    return [this.secrets.secret, this.secrets.previous].filter((secret) => secret !== null);
  }
}

/** Seals with `secret` every key stored in clear or with the previous secret (reload() opened them all). */
async function reseal(store: Pick<Store, 'auth' | 'transaction'>, { secret, previous }: KeySecrets & { secret: string }): Promise<void> {
  await store.transaction(
    async (tx) => {
      for (const record of await store.auth.signingKeys(tx)) {
        if (isEncrypted(record.privateJwk) && opensWith(record.privateJwk, secret)) continue;
        const privateJwk = decryptPrivateKey(record.privateJwk, previous === null ? [] : [previous]);
        await store.auth.resealSigningKey(record.kid, encryptPrivateKey(privateJwk, secret), tx);
      }
    },
    { lock: ['signing-keys'] },
  );
}

function opensWith(stored: string, secret: string): boolean {
  try {
    decryptPrivateKey(stored, [secret]);
    return true;
  } catch {
    return false;
  }
}

const sealed = (privateJwk: string, secret: string | null): string =>
  secret === null ? privateJwk : encryptPrivateKey(privateJwk, secret);

async function newKey(now: Date, secret: string | null) {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  // RFC 7638 thumbprint as kid: stable, and two instances racing on first start cannot collide.
  const kid = await calculateJwkThumbprint(publicJwk);
  const published: JWK = { ...publicJwk, kid, alg: SIGNING_ALGORITHM, use: 'sig' };
  return {
    kid,
    privateJwk: sealed(JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALGORITHM }), secret),
    publicJwk: JSON.stringify(published),
    createdAt: now,
  };
}

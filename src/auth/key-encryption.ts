// Token-signing private keys encrypted at rest (AES-256-GCM, the key derived from SIGNING_KEY_SECRET
// with scrypt and a random salt per key), so a copy of the database alone cannot forge tokens.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

const PREFIX = 'enc:v1:';
/** scrypt's cost (N = 2^15, r = 8): about 50 ms per key, once at start. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** The secret does not open a stored key: the wrong SIGNING_KEY_SECRET, or none where one is needed. */
export class KeySecretError extends Error {}

export const isEncrypted = (stored: string): boolean => stored.startsWith(PREFIX);

const b64 = (bytes: Buffer): string => bytes.toString('base64url');
const keyOf = (secret: string, salt: Buffer): Buffer => scryptSync(secret.normalize('NFC'), salt, 32, SCRYPT);

/** The private JWK sealed with `secret`: "enc:v1:" salt, nonce, tag and ciphertext, base64url. */
export function encryptPrivateKey(privateJwk: string, secret: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, salt), iv);
  const sealed = Buffer.concat([cipher.update(privateJwk, 'utf8'), cipher.final()]);
  return `${PREFIX}${[salt, iv, cipher.getAuthTag(), sealed].map(b64).join(':')}`;
}

/** The private JWK of a stored key, opened with the first of `secrets` that opens it. */
export function decryptPrivateKey(stored: string, secrets: readonly string[]): string {
  if (!isEncrypted(stored)) return stored;
  const [salt, iv, tag, sealed] = stored
    .slice(PREFIX.length)
    .split(':')
    .map((part) => Buffer.from(part, 'base64url'));
  if (!salt || !iv || !tag || !sealed)
    throw new KeySecretError('SIGNING_KEY_SECRET: a stored token-signing key is not in the expected form');
  for (const secret of secrets) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, salt), iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
    } catch {
      // not this secret: GCM's tag does not match
    }
  }
  throw new KeySecretError(
    secrets.length === 0
      ? 'SIGNING_KEY_SECRET: the token-signing keys in the database are encrypted: set the secret they were encrypted with'
      : 'SIGNING_KEY_SECRET: does not open the token-signing keys in the database (the wrong secret? see docs/operations.md, "Signing keys at rest")',
  );
}

// SIGNING_KEY_SECRET and SIGNING_KEY_SECRET_PREVIOUS: what seals the token-signing private keys in
// the database (src/auth/key-encryption.ts; docs/operations.md, "Signing keys at rest").
import { ConfigError } from './errors.js';

/** Shorter than this, a secret is too easy to guess offline from a copy of the database. */
const MIN_SECRET_LENGTH = 16;

export interface KeySecretsConfig {
  readonly secret: string | null;
  readonly previous: string | null;
}

function parseSecret(variable: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if ([...value].length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      variable,
      `is ${[...value].length} characters long; use at least ${MIN_SECRET_LENGTH}, such as the output of \`openssl rand -base64 32\``,
    );
  }
  return value;
}

export function parseKeySecrets(secret: string | undefined, previous: string | undefined): KeySecretsConfig {
  const parsed = { secret: parseSecret('SIGNING_KEY_SECRET', secret), previous: parseSecret('SIGNING_KEY_SECRET_PREVIOUS', previous) };
  if (parsed.previous !== null && parsed.secret === null) {
    throw new ConfigError(
      'SIGNING_KEY_SECRET_PREVIOUS',
      'is set but SIGNING_KEY_SECRET is not: set the new secret the keys are sealed with anew',
    );
  }
  return parsed;
}

// The authorization-code flow composed (docs/agent-auth.md, "Sign in with OAuth"): its clients
// (RFC 7591 and Client ID Metadata Documents), the consent with a mailed code, and its tokens.
import type { Store } from '../storage/ports.js';
import { createAuthorizations } from './authorization.js';
import { createMetadataDocuments, type MetadataDocumentOptions } from './client-metadata-document.js';
import { type CodeMailerDeps, createCodeMailer } from './code-mailer.js';
import type { SigningKeys } from './keys.js';
import { createOAuthClients } from './oauth-clients.js';
import { createOAuthTokens } from './oauth-tokens.js';
import type { AuthUrls } from './urls.js';

export interface SignInDeps {
  readonly store: Pick<Store, 'auth' | 'oauth' | 'outbox' | 'transaction' | 'afterCommit'>;
  readonly keys: SigningKeys;
  readonly urls: AuthUrls;
  readonly studioName: string;
  readonly now: () => Date;
  readonly mail: Omit<CodeMailerDeps, 'store' | 'now'>;
  readonly clientMetadata?: MetadataDocumentOptions;
}

export type SignIn = ReturnType<typeof createSignIn>;

export function createSignIn({ store, keys, urls, studioName, now, mail, clientMetadata }: SignInDeps) {
  const documents = createMetadataDocuments(clientMetadata);
  const clients = createOAuthClients({ store, documents, now });
  const mailer = createCodeMailer({ store, now, ...mail });
  const authorizations = createAuthorizations({ store, clients, mailer, urls, studioName, now });
  const tokens = createOAuthTokens({ store, keys, urls, now });
  return { clients, authorizations, tokens };
}

// The rows of one person, as subqueries both the export and the erase start from: found by address
// (lower(...) = the lower-cased address, by the indexes of migration 018).
import { type Kysely, sql } from 'kysely';
import type { DataSubject } from './personal-data-ports.js';
import type { Database } from './schema.js';

/** `lower(column)`: the expression migration 018 indexes. */
export const lowered = (column: string) => sql<string>`lower(${sql.ref(column)})`;

/** The references of the person's inquiries, as a subquery. */
export const inquiriesOf = (db: Kysely<Database>, { email }: DataSubject) =>
  db.selectFrom('inquiries').select('reference').where(lowered('email'), '=', email);

/** The ids of the service mails to the person, as a subquery. */
export const mailsTo = (db: Kysely<Database>, { email }: DataSubject) =>
  db.selectFrom('messages').select('id').where(lowered('to_address'), '=', email);

/**
 * The ids of the service mails whose text names the person's address (the quarantine digest lists
 * it): erased with them, never exported, since they hold other people's inquiries too.
 */
export const mailsMentioning = (db: Kysely<Database>, subject: DataSubject) =>
  db.selectFrom('messages').select('id').where(mentions('body', subject));

/** The column's text names the address, in any case (a LIKE with the address's own % and _ escaped). */
export const mentions = (column: 'body' | 'last_error', { email }: DataSubject) =>
  sql<boolean>`lower(${sql.ref(column)}) like ${`%${email.replace(/[\\%_]/g, (char) => `\\${char}`)}%`} escape '\\'`;

/** The agent registrations the person owns, as a subquery. */
export const clientsOf = (db: Kysely<Database>, { email }: DataSubject) =>
  db.selectFrom('agent_clients').select('client_id').where(lowered('email'), '=', email);

/** The OAuth sign-ins naming the person, or whose grant is one of their registrations, as a subquery. */
export const signInsOf = (db: Kysely<Database>, subject: DataSubject) =>
  db
    .selectFrom('oauth_authorizations')
    .select('id')
    .where((eb) => eb.or([eb(lowered('email'), '=', subject.email), eb('grant_id', 'in', clientsOf(db, subject))]));

/** The refresh tokens of the person's grants (OAuth sign-ins are registrations of theirs), as a subquery. */
export const refreshTokensOf = (db: Kysely<Database>, subject: DataSubject) =>
  db.selectFrom('oauth_refresh_tokens').select('token_hash').where('grant_id', 'in', clientsOf(db, subject));

/** The claims naming the person, and every claim of their registrations, as a subquery. */
export const claimsOf = (db: Kysely<Database>, subject: DataSubject) =>
  db
    .selectFrom('agent_claims')
    .select('token_hash')
    .where((eb) => eb.or([eb(lowered('email'), '=', subject.email), eb('client_id', 'in', clientsOf(db, subject))]));

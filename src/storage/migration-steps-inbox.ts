// The inbox's migrations (docs/inbox.md): sign-in links and sessions, each inquiry's state in the
// inbox, and the index its search reads (SQLite FTS5, PostgreSQL full text).
import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';

const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** The text an inquiry is found by: names, address, company and message (the search's one column). */
export const SEARCH_TEXT_SQL = `first_name || ' ' || last_name || ' ' || email || ' ' || coalesce(company, '') || ' ' || message`;
/** PostgreSQL's tsvector of it, split at the marks FTS5 splits at too (its parser keeps an address whole). */
export const POSTGRES_SEARCH_VECTOR_SQL = `to_tsvector('simple', translate(${SEARCH_TEXT_SQL}, '@.-_/:+', '       '))`;

export const INBOX_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '021_inbox_sign_in': {
    // One-time sign-in links and sessions, each stored only as the SHA-256 of its secret.
    async up(db) {
      await db.schema
        .createTable('inbox_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('inbox_links_email').on('inbox_links').columns(['email', 'created_at']).execute();
      await db.schema.createIndex('inbox_links_expires').on('inbox_links').column('expires_at').execute();
      await db.schema
        .createTable('inbox_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('inbox_sessions_expires').on('inbox_sessions').column('expires_at').execute();
      await db.schema.createIndex('inbox_sessions_seen').on('inbox_sessions').column('seen_at').execute();
    },
  },
  '022_inbox_states': {
    // new, read or archived (the inbox's own state; spam is the verdict): listed newest first per state.
    async up(db) {
      await db.schema
        .alterTable('inquiries')
        .addColumn('inbox_state', 'text', (c) => c.notNull().defaultTo('new'))
        .execute();
      await db.schema
        .createIndex('inquiries_inbox_listing')
        .on('inquiries')
        .columns(['verdict', 'inbox_state', 'received_at', 'reference'])
        .execute();
      // The overview counts the last 90 days by source from this index alone.
      await db.schema.createIndex('inquiries_received_source').on('inquiries').columns(['received_at', 'source']).execute();
    },
  },
  '023_inbox_search': {
    // PostgreSQL: the text's tsvector ('simple': no stemming, names stay names) kept in a generated
    // column, so that no query parses a message again, and a GIN index on it.
    // SQLite: a contentless FTS5 index (it keeps no copy of the text) kept by triggers, keyed by
    // inquiry_search_ids, whose INTEGER PRIMARY KEY, unlike a plain rowid, survives a VACUUM.
    async up(db) {
      if (onPostgres(db)) {
        await sql`alter table inquiries add column search_vector tsvector generated always as (${sql.raw(POSTGRES_SEARCH_VECTOR_SQL)}) stored`.execute(
          db,
        );
        await sql`create index inquiries_search on inquiries using gin (search_vector)`.execute(db);
        return;
      }
      await sql`create table inquiry_search_ids (id integer primary key, reference text not null unique)`.execute(db);
      await sql`create virtual table inquiries_search using fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`.execute(
        db,
      );
      await sql`insert into inquiry_search_ids (reference) select reference from inquiries order by received_at`.execute(db);
      await sql`insert into inquiries_search (rowid, text) select s.id, ${sql.raw(SEARCH_TEXT_SQL)} from inquiries join inquiry_search_ids s using (reference)`.execute(
        db,
      );
      await sql`create trigger inquiries_search_insert after insert on inquiries begin
        insert into inquiry_search_ids (reference) values (new.reference);
        insert into inquiries_search (rowid, text) values (last_insert_rowid(), ${sql.raw(SEARCH_TEXT_SQL.replace(/(first_name|last_name|email|company|message)/g, 'new.$1'))});
      end`.execute(db);
      await sql`create trigger inquiries_search_delete after delete on inquiries begin
        delete from inquiries_search where rowid = (select id from inquiry_search_ids where reference = old.reference);
        delete from inquiry_search_ids where reference = old.reference;
      end`.execute(db);
    },
  },
};

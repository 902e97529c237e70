// InboxStore (ports-inbox.ts): sign-in links and sessions by the hash of their secret, each
// inquiry's inbox state, the listing (keyset paged, searched through migration 023's index) and
// the overview's counts per day.
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import { executorOn } from './executor.js';
import type { OpenDatabase } from './handle.js';
import type { InboxEntry, InboxQuery, InboxSessionRecord, InboxStore } from './ports-inbox.js';
import { INQUIRY_COLUMNS, toDelivery, toInquiry, toJudgement } from './rows.js';
import type { Database } from './schema.js';

const DAY_MS = 86_400_000;

type Row = Selectable<Database['inquiries']> & { agent_name: string | null; agent_email: string | null; agent_status: string | null };

const toEntry = (row: Row): InboxEntry => ({
  inquiry: toInquiry(row),
  status: row.verdict === 'spam' ? 'spam' : row.inbox_state,
  agentName: row.agent_name,
  // A pending registration's address is not proved yet (src/auth/agent-identity.ts).
  agentVerifiedEmail: row.agent_status === 'pending' ? null : row.agent_email,
});

const toSession = (row: Database['inbox_sessions']): InboxSessionRecord => ({
  idHash: row.id_hash,
  email: row.email,
  csrfToken: row.csrf_token,
  createdAt: new Date(Number(row.created_at)),
  seenAt: new Date(Number(row.seen_at)),
  expiresAt: new Date(Number(row.expires_at)),
});

/** The search's query text: every word as a prefix, all required (words hold only letters and digits). */
export const searchQuery = (dialect: OpenDatabase['dialect'], words: readonly string[]): string =>
  dialect === 'postgres' ? words.map((word) => `${word}:*`).join(' & ') : words.map((word) => `"${word}"*`).join(' ');

export function createInboxStore({ db, dialect }: OpenDatabase): InboxStore {
  const q = executorOn(db);
  const listing = () =>
    db
      .selectFrom('inquiries')
      .leftJoin('agent_clients', 'agent_clients.client_id', 'inquiries.client_id')
      .select(INQUIRY_COLUMNS.map((column) => `inquiries.${column}` as const))
      .select(['agent_clients.client_name as agent_name', 'agent_clients.email as agent_email', 'agent_clients.status as agent_status']);

  const statusFilter = (status: InboxQuery['status']) => (eb: ExpressionBuilder<Database, 'inquiries'>) => {
    if (status === 'spam') return eb('inquiries.verdict', '=', 'spam');
    if (status === 'all') return eb.lit(true);
    const states = status === 'inbox' ? (['new', 'read'] as const) : ([status] as const);
    return eb.and([eb('inquiries.verdict', '=', 'inbox'), eb('inquiries.inbox_state', 'in', states)]);
  };

  const matching = (words: readonly string[]) => (eb: ExpressionBuilder<Database, 'inquiries'>) => {
    const query = searchQuery(dialect, words);
    if (dialect === 'postgres') return sql<boolean>`inquiries.search_vector @@ to_tsquery('simple', ${query})`;
    return eb(
      'inquiries.reference',
      'in',
      sql<string>`(select reference from inquiry_search_ids where id in (select rowid from inquiries_search where inquiries_search match ${query}))`,
    );
  };

  return {
    async insertLink(link, tx) {
      await q(tx)
        .insertInto('inbox_links')
        .values({
          token_hash: link.tokenHash,
          email: link.email,
          created_at: link.createdAt.getTime(),
          expires_at: link.expiresAt.getTime(),
        })
        .execute();
    },
    async countLinksSince(email, since) {
      const row = await db
        .selectFrom('inbox_links')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('email', '=', email)
        .where('created_at', '>=', since.getTime())
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async takeLink(tokenHash, now) {
      const row = await db
        .deleteFrom('inbox_links')
        .where('token_hash', '=', tokenHash)
        .returning(['email', 'expires_at'])
        .executeTakeFirst();
      return row && Number(row.expires_at) > now.getTime() ? row.email : undefined;
    },
    async insertSession(session) {
      await db
        .insertInto('inbox_sessions')
        .values({
          id_hash: session.idHash,
          email: session.email,
          csrf_token: session.csrfToken,
          created_at: session.createdAt.getTime(),
          seen_at: session.seenAt.getTime(),
          expires_at: session.expiresAt.getTime(),
        })
        .execute();
    },
    async findSession(idHash) {
      const row = await db.selectFrom('inbox_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toSession(row);
    },
    async touchSession(idHash, at) {
      await db.updateTable('inbox_sessions').set({ seen_at: at.getTime() }).where('id_hash', '=', idHash).execute();
    },
    async deleteSession(idHash) {
      const result = await db.deleteFrom('inbox_sessions').where('id_hash', '=', idHash).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async deleteAllSessions() {
      return Number((await db.deleteFrom('inbox_sessions').executeTakeFirst()).numDeletedRows);
    },
    async compactSearch() {
      if (dialect === 'sqlite') await sql`insert into inquiries_search (inquiries_search) values ('optimize')`.execute(db);
    },
    async purgeExpired(now, idleSince) {
      const links = await db.deleteFrom('inbox_links').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      const sessions = await db
        .deleteFrom('inbox_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now.getTime()), eb('seen_at', '<=', idleSince.getTime())]))
        .executeTakeFirst();
      return Number(links.numDeletedRows) + Number(sessions.numDeletedRows);
    },
    async list({ words, status, source, limit, after }) {
      const searching = words !== undefined && words.length > 0;
      let query = listing().where(statusFilter(status));
      if (source === 'unknown') query = query.where('inquiries.source', 'is', null);
      else if (source) query = query.where('inquiries.source', '=', source);
      if (searching) query = query.where(matching(words));
      if (after) {
        const at = after.receivedAt.getTime();
        query = query
          .where('inquiries.received_at', '<=', at)
          .where((eb) => eb.or([eb('inquiries.received_at', '<', at), eb('inquiries.reference', '>', after.reference)]));
      }
      const rows = await query.orderBy('inquiries.received_at', 'desc').orderBy('inquiries.reference').limit(limit).execute();
      return rows.map((row) => toEntry(row as Row));
    },
    async find(reference) {
      const row = await listing().where('inquiries.reference', '=', reference).executeTakeFirst();
      if (!row) return undefined;
      const deliveries = await db.selectFrom('deliveries').selectAll().where('reference', '=', reference).orderBy('channel').execute();
      return { ...toEntry(row as Row), judgement: toJudgement(row), deliveries: deliveries.map(toDelivery) };
    },
    async setState(reference, state) {
      const result = await db.updateTable('inquiries').set({ inbox_state: state }).where('reference', '=', reference).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async countPerDay(since) {
      const day = sql<number>`cast(received_at / ${sql.lit(DAY_MS)} as integer)`;
      const rows = await db
        .selectFrom('inquiries')
        .select((eb) => [day.as('day'), 'source', eb.fn.countAll<number | string>().as('count')])
        .where('received_at', '>=', since.getTime())
        .groupBy([day, 'source'])
        .execute();
      return rows.map((row) => ({
        day: new Date(Number(row.day) * DAY_MS).toISOString().slice(0, 10),
        source: row.source,
        count: Number(row.count),
      }));
    },
  };
}

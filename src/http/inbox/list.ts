// The inbox's list (GET /inbox), the rows newer than the newest shown (GET /inbox/updates, which
// inbox.js polls) and the export of the list as it is filtered (GET /inbox/export).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { cursorOf, inboxQuery, type ListRequest, parseListRequest } from '../../inbox/query.js';
import type { ListedInquiry } from '../../inbox/service.js';
import { CSV_HEADER, csvRecord, csvValues } from '../../inquiries/export-format.js';
import { messagePage } from '../../web/inbox/layout.js';
import { listPage, listRow } from '../../web/inbox/list.js';
import { overviewPage } from '../../web/inbox/overview.js';
import { signInForm } from '../../web/inbox/sign-in.js';
import { type InboxHttp, pageContext, requireSession, sendHtml, sessionOf } from './context.js';

const CURSOR = /^(\d{1,15})\.(INQ-[0-9A-HJKMNP-TV-Z]{6})$/;

/** Whether a row comes before `since` (a cursor) newest first: newer, or as new and sorting first. */
function newerThan(since: string) {
  const match = CURSOR.exec(since);
  if (!match) return () => false;
  const at = Number(match[1]);
  const reference = match[2] as string;
  return ({ inquiry }: ListedInquiry) =>
    inquiry.receivedAt.getTime() > at || (inquiry.receivedAt.getTime() === at && inquiry.reference < reference);
}

const exportEntry = ({ inquiry, status, agentName, deliveries }: ListedInquiry) => ({ ...inquiry, status, agentName, deliveries });

export function listRoutes(app: FastifyInstance, http: InboxHttp, banner: () => Promise<string>) {
  const badRequest = (problem: string) =>
    messagePage(pageContext(http), 'Not a list this inbox can show', `The address is not one of the inbox's: ${problem}.`);

  app.get('/inbox', async (request, reply) => {
    const session = await sessionOf(http, request);
    if (session === undefined) return sendHtml(reply, 200, signInForm(pageContext(http)));
    const parsed = parseListRequest(request.query as Record<string, unknown>);
    if ('problem' in parsed) return sendHtml(reply, 400, badRequest(parsed.problem));
    const rows = await http.service.list(inboxQuery(parsed));
    return sendHtml(reply, 200, listPage(pageContext(http, session), parsed, rows, await banner()));
  });

  app.get('/inbox/overview', async (request, reply) => {
    const session = await requireSession(http, request, reply);
    if (session === undefined) return reply;
    const [perDay, health] = await Promise.all([http.service.perDay(), http.health()]);
    return sendHtml(reply, 200, overviewPage(pageContext(http, session), perDay, health, await banner()));
  });

  app.get('/inbox/updates', async (request, reply) => {
    const session = await sessionOf(http, request);
    if (session === undefined) return reply.code(401).send({ signedIn: false });
    const { since = '', ...rest } = request.query as Record<string, unknown>;
    const parsed = parseListRequest(rest);
    if ('problem' in parsed || typeof since !== 'string' || (since !== '' && !CURSOR.test(since)))
      return reply.code(400).send({ signedIn: true });
    const rows = (await http.service.list(inboxQuery({ ...parsed, after: '' }))).filter(since === '' ? () => true : newerThan(since));
    const context = pageContext(http, session);
    return reply.send({ signedIn: true, rows: rows.map((row) => ({ cursor: cursorOf(row.inquiry), html: listRow(context, row) })) });
  });

  app.get('/inbox/export', async (request, reply) => {
    const session = await requireSession(http, request, reply);
    if (session === undefined) return reply;
    const { format, ...rest } = request.query as Record<string, unknown>;
    const parsed = parseListRequest(rest);
    if ('problem' in parsed) return sendHtml(reply, 400, badRequest(parsed.problem));
    if (format !== 'csv' && format !== 'json') return sendHtml(reply, 400, badRequest('format must be csv or json'));
    const { limit: _limit, after: _after, ...query } = inboxQuery({ ...parsed, after: '' } satisfies ListRequest);
    const entries = http.service.all(query);
    async function* chunks() {
      let first = true;
      yield format === 'csv' ? csvRecord([...CSV_HEADER, 'status', 'source', 'agentName']) : '[';
      for await (const entry of entries) {
        const { inquiry, status, agentName, deliveries } = entry;
        yield format === 'csv'
          ? csvRecord([...csvValues(inquiry, deliveries), status, inquiry.source, agentName])
          : `${first ? '' : ','}\n${JSON.stringify(exportEntry(entry))}`;
        first = false;
      }
      if (format === 'json') yield '\n]\n';
    }
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="inquiries-${day}.${format}"`)
      .send(Readable.from(chunks()));
  });
}

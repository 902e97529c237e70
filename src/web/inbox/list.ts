// The inbox's list (GET /inbox): search, filters by status and source, newest first a page at a
// time, each row's status, sender, first line, source and delivery state; new rows arrive live.
import { cursorOf, type ListRequest, listSearch, PAGE_SIZE, SOURCE_FILTERS, STATUS_FILTERS } from '../../inbox/query.js';
import type { ListedInquiry } from '../../inbox/service.js';
import { SOURCE_NAMES } from '../../inquiries/source.js';
import type { InboxStatusFilter } from '../../storage/ports-inbox.js';
import { escapeHtml as e } from '../html.js';
import { type PageContext, renderPage } from './layout.js';
import { deliveryGlance, firstLine, fullName, sourceText, statusBadge, timeTag } from './parts.js';

const STATUS_FILTER_LABELS: Readonly<Record<InboxStatusFilter, string>> = {
  inbox: 'Inbox (new and read)',
  new: 'New',
  read: 'Read',
  archived: 'Archived',
  spam: 'Spam',
  all: 'All',
};

const option = (value: string, label: string, selected: string) =>
  `<option value="${e(value)}"${value === selected ? ' selected' : ''}>${e(label)}</option>`;

/** One row of the list (also what the live updates insert). */
export function listRow(context: PageContext, { inquiry, status, agentName, deliveries }: ListedInquiry): string {
  const company = inquiry.company ? `<span class="row__company">${e(inquiry.company)}</span>` : '';
  return `<tr class="row row--${status}" data-cursor="${e(cursorOf(inquiry))}">
<td>${statusBadge(status)}</td>
<td><a class="row__link" href="${e(context.root)}/inquiries/${e(inquiry.reference)}">${e(fullName(inquiry))}</a>${company}</td>
<td class="row__message">${e(firstLine(inquiry.message))}</td>
<td>${sourceText(inquiry, agentName)}</td>
<td>${deliveryGlance(deliveries)}</td>
<td>${timeTag(inquiry.receivedAt, context.timeZone)}</td>
</tr>`;
}

export function listPage(context: PageContext, request: ListRequest, rows: readonly ListedInquiry[], banner = ''): string {
  const root = e(context.root);
  const filters = { q: request.q, status: request.status, source: request.source };
  const next = rows.length === PAGE_SIZE ? listSearch({ ...filters, after: cursorOf((rows.at(-1) as ListedInquiry).inquiry) }) : null;
  const searched = request.q !== '' || request.status !== 'inbox' || request.source !== '';
  const empty = searched ? 'No inquiries match.' : 'No inquiries yet.';
  // Live updates only where new inquiries would show: the first page.
  const live = request.after === '' ? ` data-live="${e(`${context.root}/updates${listSearch(filters)}`)}"` : '';
  const body = `<h1>Inquiries</h1>
<form method="get" action="${root}" class="filters" role="search">
<div class="field field--grow">
<label for="q">Search names, addresses, companies and messages</label>
<input id="q" name="q" type="search" value="${e(request.q)}" maxlength="200">
</div>
<div class="field">
<label for="status">Status</label>
<select id="status" name="status">${STATUS_FILTERS.map((value) => option(value, STATUS_FILTER_LABELS[value], request.status)).join('')}</select>
</div>
<div class="field">
<label for="source">Source</label>
<select id="source" name="source">${option('', 'Any', request.source)}${SOURCE_FILTERS.map((value) => option(value, value === 'unknown' ? 'Unknown' : SOURCE_NAMES[value], request.source)).join('')}</select>
</div>
<button type="submit" class="button">Search</button>
</form>
<p class="exports">Export this list: <a href="${root}/export${listSearch({ ...filters, format: 'csv' })}" download>CSV</a> · <a href="${root}/export${listSearch({ ...filters, format: 'json' })}" download>JSON</a></p>
<p id="live-status" class="visually-hidden" role="status" aria-live="polite"></p>
<div class="table-scroll" role="region" aria-labelledby="list-caption" tabindex="0">
<table class="list">
<caption id="list-caption">${e(STATUS_FILTER_LABELS[request.status])}${request.q === '' ? '' : `, matching “${e(request.q)}”`}, newest first</caption>
<thead><tr><th scope="col">Status</th><th scope="col">From</th><th scope="col">Message</th><th scope="col">Source</th><th scope="col">Delivery</th><th scope="col">Received</th></tr></thead>
<tbody id="rows"${live}>
${rows.map((row) => listRow(context, row)).join('\n')}
</tbody>
</table>
</div>
${rows.length === 0 ? `<p class="empty">${empty}</p>` : ''}
<nav class="pager" aria-label="Pages">
${request.after === '' ? '' : `<a href="${root}${listSearch(filters)}">Newest</a>`}
${next === null ? '' : `<a href="${root}${e(next)}">Older inquiries</a>`}
</nav>`;
  return renderPage(context, { title: 'Inquiries', body, current: 'list', banner });
}

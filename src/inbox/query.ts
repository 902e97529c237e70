// The inbox list's address (GET /inbox?q=&status=&source=&after=): read into an InboxQuery, and
// written back for links. Anything not understood is refused rather than ignored.
import type { InquirySource } from '../storage/ports.js';
import type { InboxQuery, InboxStatusFilter } from '../storage/ports-inbox.js';

export const PAGE_SIZE = 50;
/** Words searched at most, and each word's length at most: a query is a few words, not a document. */
const MAX_WORDS = 8;
const MAX_WORD_LENGTH = 64;
const MAX_QUERY_LENGTH = 200;

export const STATUS_FILTERS: readonly InboxStatusFilter[] = ['inbox', 'new', 'read', 'archived', 'spam', 'all'];
export const SOURCE_FILTERS: readonly (InquirySource | 'unknown')[] = ['page', 'api', 'mcp', 'unknown'];

/** What the list shows and how it was asked for (its address's parameters, normalised). */
export interface ListRequest {
  readonly q: string;
  readonly status: InboxStatusFilter;
  readonly source: InquirySource | 'unknown' | '';
  readonly after: string;
}

/** The words a search text holds: runs of letters and digits, as both indexes split text. */
export function searchWords(text: string): string[] {
  const words =
    text
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_WORDS).map((word) => word.slice(0, MAX_WORD_LENGTH));
}

const CURSOR = /^(\d{1,15})\.(INQ-[0-9A-HJKMNP-TV-Z]{6})$/;

/** The page's parameters, or the problem with them. */
export function parseListRequest(params: Readonly<Record<string, unknown>>): ListRequest | { problem: string } {
  const text = (name: string) => {
    const value = params[name];
    return typeof value === 'string' ? value : undefined;
  };
  for (const [name, value] of Object.entries(params)) {
    if (!['q', 'status', 'source', 'after', 'format'].includes(name)) return { problem: `unknown parameter "${name}"` };
    if (typeof value !== 'string') return { problem: `"${name}" is given more than once` };
  }
  const q = text('q') ?? '';
  if ([...q].length > MAX_QUERY_LENGTH) return { problem: `the search is longer than ${MAX_QUERY_LENGTH} characters` };
  const status = (text('status') || 'inbox') as InboxStatusFilter;
  if (!STATUS_FILTERS.includes(status)) return { problem: `status must be one of ${STATUS_FILTERS.join(', ')}` };
  const source = (text('source') ?? '') as ListRequest['source'];
  if (source !== '' && !SOURCE_FILTERS.includes(source)) return { problem: `source must be one of ${SOURCE_FILTERS.join(', ')}` };
  const after = text('after') ?? '';
  if (after !== '' && !CURSOR.test(after)) return { problem: 'after is not a position in the list' };
  return { q, status, source, after };
}

/** The store's query for a list request. */
export function inboxQuery(request: ListRequest, limit = PAGE_SIZE): InboxQuery {
  const match = CURSOR.exec(request.after);
  const words = searchWords(request.q);
  return {
    status: request.status,
    limit,
    ...(words.length > 0 && { words }),
    ...(request.source !== '' && { source: request.source }),
    ...(match && { after: { receivedAt: new Date(Number(match[1])), reference: match[2] as string } }),
  };
}

/** The position after an inquiry, for the next page's address. */
export const cursorOf = ({ receivedAt, reference }: { receivedAt: Date; reference: string }) => `${receivedAt.getTime()}.${reference}`;

/** The address's query string for a request (empty values left out). */
export function listSearch(request: Readonly<Record<string, string | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request)) if (value && !(name === 'status' && value === 'inbox')) params.set(name, value);
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}

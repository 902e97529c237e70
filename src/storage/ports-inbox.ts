// The storage port of the studio's inbox, apart from Store as personal-data-ports.ts is: sign-in links and sessions, each
// inquiry's state there, the listing with its search, and the counts of the overview. Types only.
import type { DeliveryRecord, InquiryJudgement, InquiryRecord, InquirySource } from './ports.js';
import type { Tx } from './ports-tx.js';

/** An inquiry's state in the inbox, apart from its verdict. */
export type InboxState = 'new' | 'read' | 'archived';
/** What the list shows: the state, or spam for a quarantined inquiry whatever its state. */
export type InboxStatus = InboxState | 'spam';
/** The list's status filter: `inbox` is new and read together, `all` every inquiry. */
export type InboxStatusFilter = InboxStatus | 'inbox' | 'all';

export interface InboxLinkRecord {
  /** SHA-256 (hex) of the token the link carries. */
  readonly tokenHash: string;
  /** The user's address, lower-cased. */
  readonly email: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface InboxSessionRecord {
  /** SHA-256 (hex) of the id the cookie carries. */
  readonly idHash: string;
  readonly email: string;
  readonly csrfToken: string;
  readonly createdAt: Date;
  readonly seenAt: Date;
  readonly expiresAt: Date;
}

export interface InboxQuery {
  /** Words each of which some field must contain (a prefix of one of its words). */
  readonly words?: readonly string[];
  readonly status: InboxStatusFilter;
  /** One door, or `unknown` for inquiries stored before sources were. */
  readonly source?: InquirySource | 'unknown';
  readonly limit: number;
  /** Those after this one, newest first (keyset paging). */
  readonly after?: Pick<InquiryRecord, 'receivedAt' | 'reference'>;
}

/** An inquiry as the inbox lists it. */
export interface InboxEntry {
  readonly inquiry: InquiryRecord;
  readonly status: InboxStatus;
  /** The name the agent that sent it registered, if an agent did. */
  readonly agentName: string | null;
  /** The address the agent's person proved, if one did (an OAuth sign-in, a claim, an ID-JAG). */
  readonly agentVerifiedEmail: string | null;
}

/** One inquiry with everything its page shows. */
export interface InboxInquiry extends InboxEntry {
  readonly judgement: InquiryJudgement;
  readonly deliveries: readonly DeliveryRecord[];
}

/** Inquiries received on one UTC day through one door. */
export interface DailyCount {
  /** YYYY-MM-DD (UTC). */
  readonly day: string;
  readonly source: InquirySource | null;
  readonly count: number;
}

export interface InboxStore {
  insertLink(link: InboxLinkRecord, tx?: Tx): Promise<void>;
  /** Links made for `email` since `since` (the sign-in limit per address). */
  countLinksSince(email: string, since: Date): Promise<number>;
  /** Deletes the link and answers its address when it had not expired at `now`: once, across instances. */
  takeLink(tokenHash: string, now: Date): Promise<string | undefined>;
  insertSession(session: InboxSessionRecord): Promise<void>;
  findSession(idHash: string): Promise<InboxSessionRecord | undefined>;
  touchSession(idHash: string, at: Date): Promise<void>;
  deleteSession(idHash: string): Promise<boolean>;
  /** Ends every session; returns how many there were. */
  deleteAllSessions(): Promise<number>;
  /**
   * Merges the search index whole (SQLite FTS5 keeps a deleted inquiry's words until its segments
   * merge; PostgreSQL's index goes with the row): after deletions, so that none of their words stays.
   */
  compactSearch(): Promise<void>;
  /** Deletes links expired at `now` and sessions expired or idle since `idleSince`; returns how many. */
  purgeExpired(now: Date, idleSince: Date): Promise<number>;
  list(query: InboxQuery): Promise<InboxEntry[]>;
  find(reference: string): Promise<InboxInquiry | undefined>;
  /** Sets an inquiry's state; false where none has that reference. */
  setState(reference: string, state: InboxState): Promise<boolean>;
  /** Inquiries received at or after `since`, by UTC day and source. */
  countPerDay(since: Date): Promise<DailyCount[]>;
}

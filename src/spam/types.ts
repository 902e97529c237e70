// The spam verdict's shapes: what the caller hands in and what it gets back (docs/spam.md).

/** The five wire fields of an inquiry (docs/api.md); `company` is null when it was left out. */
export interface SpamInquiry {
  firstName: string;
  lastName: string;
  email: string;
  company: string | null;
  message: string;
}

/** Whether the contact page's proof of work came with the inquiry, and whether it held. */
export type ProofSignal = 'valid' | 'invalid' | 'missing';

/** What the caller knows beyond the content of the inquiry. */
export interface SpamSignals {
  proof: ProofSignal;
  /** The page's hidden field was filled in: only a bot sees it. */
  honeypot: boolean;
  /** Sent with the token of an agent whose registration was claimed: content rules do not count. */
  trustedAgent: boolean;
  /** How many other addresses sent the same message body within the last hour. */
  repeatedFromOtherAddresses: number;
}

export const NEUTRAL_SIGNALS: SpamSignals = Object.freeze({
  proof: 'missing',
  honeypot: false,
  trustedAgent: false,
  repeatedFromOtherAddresses: 0,
});

export const SPAM_CODES = [
  'too_many_links',
  'link_in_name',
  'url_shortener',
  'markup_link',
  'spam_phrases',
  'disposable_email',
  'random_name',
  'obfuscated_text',
  'sales_pitch',
  'role_name',
  'hype',
  'spam_vocabulary',
  'off_topic',
  'repeated_message',
  'honeypot',
  'invalid_proof',
  'valid_proof',
  'trusted_agent',
] as const;

export type SpamCode = (typeof SPAM_CODES)[number];

export interface SpamReason {
  code: SpamCode;
  detail: string;
}

export interface SpamJudgement {
  verdict: 'inbox' | 'spam';
  score: number;
  reasons: SpamReason[];
}

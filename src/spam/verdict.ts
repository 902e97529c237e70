// The spam verdict of one inquiry: the rules' points added up and compared with the threshold.
import { nfkc } from './case-fold.js';
import { CONTENT_RULES, type RuleHit, SIGNAL_RULES } from './rules.js';
import type { SpamInquiry, SpamJudgement, SpamReason, SpamSignals } from './types.js';
import { DEFAULT_SPAM_THRESHOLD } from './weights.js';

export interface JudgeOptions {
  /** The score from which an inquiry is spam (SPAM_THRESHOLD). */
  threshold?: number;
}

/** What the content rules found in an inquiry: read once, before the signals are all known. */
export interface ContentReading {
  readonly hits: readonly RuleHit[];
}

/** NFKC folds look-alike letters ("𝐒𝐄𝐎", full-width "ｗｗｗ") into the ones the rules read. */
function normalised(inquiry: SpamInquiry): SpamInquiry {
  return {
    firstName: nfkc(inquiry.firstName),
    lastName: nfkc(inquiry.lastName),
    email: nfkc(inquiry.email),
    company: inquiry.company === null ? null : nfkc(inquiry.company),
    message: nfkc(inquiry.message),
  };
}

const isHit = (hit: RuleHit | null): hit is RuleHit => hit !== null;
const reasonOf = ({ code, detail }: RuleHit): SpamReason => ({ code, detail });

/** The content rules' hits: the costly part of a verdict, which reads only the five fields. */
export function readContent(inquiry: SpamInquiry): ContentReading {
  const text = normalised(inquiry);
  return { hits: CONTENT_RULES.map((rule) => rule(text)).filter(isHit) };
}

/** The verdict of an inquiry whose content was read, given what is known beyond it. */
export function decide(content: ContentReading, signals: SpamSignals, options: JudgeOptions = {}): SpamJudgement {
  const threshold = options.threshold ?? DEFAULT_SPAM_THRESHOLD;
  const contentHits = content.hits;
  const signalHits = SIGNAL_RULES.map((rule) => rule(signals)).filter(isHit);
  const counted = signals.trustedAgent ? signalHits : [...contentHits, ...signalHits];
  const score = Math.round(counted.reduce((sum, hit) => sum + hit.points, 0) * 100) / 100;
  const reasons = [...contentHits, ...signalHits].map(reasonOf);
  if (signals.trustedAgent && contentHits.length > 0) {
    reasons.push({ code: 'trusted_agent', detail: 'sent by a claimed agent: the content rules above do not count' });
  }
  return { verdict: score >= threshold ? 'spam' : 'inbox', score, reasons };
}

export function judge(inquiry: SpamInquiry, signals: SpamSignals, options: JudgeOptions = {}): SpamJudgement {
  return decide(readContent(inquiry), signals, options);
}

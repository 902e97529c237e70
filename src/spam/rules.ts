// The spam rules: each looks at one thing and says how many points it adds, and why.
// The points come from SPAM_WEIGHTS (weights.ts); docs/spam.md has an example of each rule.
import { disposableDomainOf } from './disposable.js';
import { findEmailAddresses, findLinks, hasMarkupLink, hostOf, isExplicitLink, isShortener } from './links.js';
import { findSpamPhrases, type PhraseStrength } from './phrases.js';
import { looksRandom } from './random-name.js';
import type { SpamCode, SpamInquiry, SpamSignals } from './types.js';
import { SPAM_WEIGHTS } from './weights.js';

export interface RuleHit {
  code: SpamCode;
  points: number;
  detail: string;
}

/** Content rules read only the five fields; a claimed agent's inquiry is not judged on them. */
export type ContentRule = (inquiry: SpamInquiry) => RuleHit | null;
export type SignalRule = (signals: SpamSignals) => RuleHit | null;

const MAX_LISTED = 5;

function listed(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).map((item) => (item.length > 60 ? `${item.slice(0, 57)}...` : item));
  return items.length > MAX_LISTED ? `${shown.join(', ')} and ${items.length - MAX_LISTED} more` : shown.join(', ');
}

export const tooManyLinks: ContentRule = ({ message }) => {
  const { freeLinks, perLink, maxPoints } = SPAM_WEIGHTS.tooManyLinks;
  const count = findLinks(message).length;
  if (count <= freeLinks) return null;
  const points = Math.min((count - freeLinks) * perLink, maxPoints);
  return { code: 'too_many_links', points, detail: `${count} links in the message (${freeLinks} pass)` };
};

export const linkInName: ContentRule = ({ firstName, lastName, company }) => {
  const names = [
    ['first name', firstName, findLinks(firstName)],
    ['last name', lastName, findLinks(lastName)],
    ['company', company ?? '', findLinks(company ?? '').filter(isExplicitLink)],
  ] as const;
  const fields = names.filter(([, text, links]) => links.length > 0 || findEmailAddresses(text).length > 0).map(([field]) => field);
  if (fields.length === 0) return null;
  return { code: 'link_in_name', points: SPAM_WEIGHTS.linkInName, detail: `a link or an address in the ${listed(fields)}` };
};

export const urlShortener: ContentRule = (inquiry) => {
  const hosts = [inquiry.message, inquiry.firstName, inquiry.lastName, inquiry.company ?? '']
    .flatMap(findLinks)
    .filter(isShortener)
    .map(hostOf);
  if (hosts.length === 0) return null;
  return { code: 'url_shortener', points: SPAM_WEIGHTS.urlShortener, detail: `shortened links: ${listed([...new Set(hosts)])}` };
};

export const markupLink: ContentRule = (inquiry) => {
  const fields = [inquiry.message, inquiry.firstName, inquiry.lastName, inquiry.company ?? ''];
  if (!fields.some(hasMarkupLink)) return null;
  return { code: 'markup_link', points: SPAM_WEIGHTS.markupLink, detail: 'an HTML or BBCode link (<a href, [url=)' };
};

export const spamPhrases: ContentRule = (inquiry) => {
  const phrases = findSpamPhrases([inquiry.message, inquiry.company ?? ''].join('\n'));
  if (phrases.length === 0) return null;
  const { weakMaxPoints, ...weights } = SPAM_WEIGHTS.spamPhrase;
  const pointsOf = (strength: PhraseStrength): number => phrases.filter((found) => found.strength === strength).length * weights[strength];
  const points = pointsOf('strong') + pointsOf('pitch') + Math.min(pointsOf('weak'), weakMaxPoints);
  const detail = `${phrases.length} spam phrase${phrases.length === 1 ? '' : 's'}: ${listed(phrases.map(({ phrase }) => phrase))}`;
  return { code: 'spam_phrases', points, detail };
};

export const disposableEmail: ContentRule = ({ email }) => {
  const domain = disposableDomainOf(email);
  if (domain === null) return null;
  return { code: 'disposable_email', points: SPAM_WEIGHTS.disposableEmail, detail: `${domain} is a throwaway mail domain` };
};

export const randomName: ContentRule = ({ firstName, lastName, company }) => {
  const fields = [
    ['first name', firstName],
    ['last name', lastName],
    ['company', company ?? ''],
  ] as const;
  const random = fields.filter(([, text]) => looksRandom(text)).map(([field]) => field);
  if (random.length === 0) return null;
  return { code: 'random_name', points: random.length * SPAM_WEIGHTS.randomName, detail: `random letters in the ${listed(random)}` };
};

export const repeatedMessage: SignalRule = ({ repeatedFromOtherAddresses }) => {
  const others = Number.isNaN(repeatedFromOtherAddresses) ? 0 : Math.floor(Math.min(repeatedFromOtherAddresses, Number.MAX_SAFE_INTEGER));
  if (others <= 0) return null;
  const { perAddress, maxPoints } = SPAM_WEIGHTS.repeatedMessage;
  const points = Math.min(others * perAddress, maxPoints);
  return {
    code: 'repeated_message',
    points,
    detail: `the same message from ${others} other address${others === 1 ? '' : 'es'} within an hour`,
  };
};

export const honeypot: SignalRule = (signals) =>
  signals.honeypot ? { code: 'honeypot', points: SPAM_WEIGHTS.honeypot, detail: 'the hidden field was filled in' } : null;

export const proofOfWork: SignalRule = ({ proof }) => {
  if (proof === 'invalid')
    return { code: 'invalid_proof', points: SPAM_WEIGHTS.invalidProof, detail: 'invalid, stale or replayed proof of work' };
  if (proof === 'valid') return { code: 'valid_proof', points: SPAM_WEIGHTS.validProof, detail: 'a fresh, valid proof of work' };
  return null;
};

export const CONTENT_RULES: readonly ContentRule[] = [
  tooManyLinks,
  linkInName,
  urlShortener,
  markupLink,
  spamPhrases,
  disposableEmail,
  randomName,
];

export const SIGNAL_RULES: readonly SignalRule[] = [honeypot, proofOfWork, repeatedMessage];

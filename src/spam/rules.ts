// The spam rules: each looks at one thing and says how many points it adds, and why.
// The points come from SPAM_WEIGHTS (weights.ts); docs/spam.md has an example of each rule.
import { disposableDomainOf } from './disposable.js';
import { hypeEmoji, promisesMoney } from './hype.js';
import { findEmailAddresses, findLinks, hasMarkupLink, hostOf, isExplicitLink, isShortener } from './links.js';
import { joinSpeltOut, mixedScriptWords } from './obfuscation.js';
import { findSpamPhrases, type PhraseStrength } from './phrases.js';
import { pitchParts } from './pitch.js';
import { looksRandom } from './random-name.js';
import { nameRoles } from './sender-name.js';
import { namesStudioWork } from './topic.js';
import type { SpamCode, SpamInquiry, SpamSignals } from './types.js';
import { spamLogOdds } from './vocabulary.js';
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
  // Words spelt out letter by letter ("S.E.O") are read joined; a run never spans a line break.
  const phrases = findSpamPhrases([inquiry.message, inquiry.company ?? ''].map((field) => joinSpeltOut(field).text).join('\n'));
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

export const obfuscatedText: ContentRule = (inquiry) => {
  const fields = [inquiry.firstName, inquiry.lastName, inquiry.company ?? '', inquiry.message];
  const mixed = fields.flatMap(mixedScriptWords);
  const spelt = fields.flatMap((field) => joinSpeltOut(field).long);
  const { perWord, maxPoints } = SPAM_WEIGHTS.speltOut;
  const points = (mixed.length >= 2 ? SPAM_WEIGHTS.mixedScript : 0) + Math.min(spelt.length * perWord, maxPoints);
  if (points === 0) return null;
  const seen = [
    ...(mixed.length >= 2 ? [`${mixed.length} words mixing Latin and look-alike letters`] : []),
    ...spelt.map((word) => `"${word}" spelt out`),
  ];
  return { code: 'obfuscated_text', points, detail: listed(seen) };
};

export const salesPitch: ContentRule = ({ message }) => {
  const parts = pitchParts(joinSpeltOut(message).text);
  if (parts < 2) return null;
  const points = parts === 3 ? SPAM_WEIGHTS.salesPitch.allThree : SPAM_WEIGHTS.salesPitch.two;
  return { code: 'sales_pitch', points, detail: `${parts} of a pitch's parts (their business, an offer, an ask), no need of its own` };
};

export const roleName: ContentRule = ({ firstName, lastName }) => {
  const { role, brand } = nameRoles(firstName, lastName);
  if (!role && !brand) return null;
  const points = (role ? SPAM_WEIGHTS.roleName.role : 0) + (brand ? SPAM_WEIGHTS.roleName.brand : 0);
  const detail = [...(role ? ['a team or department'] : []), ...(brand ? ['a famous brand'] : [])].join(' and ');
  return { code: 'role_name', points, detail: `the sender's name is ${detail}` };
};

export const hype: ContentRule = ({ message }) => {
  const emoji = hypeEmoji(message).count >= 3;
  const money = promisesMoney(message);
  if (!emoji && !money) return null;
  const points = (emoji ? SPAM_WEIGHTS.hype.emoji : 0) + (money ? SPAM_WEIGHTS.hype.money : 0);
  const detail = [...(emoji ? ['promotion emoji'] : []), ...(money ? ['money promised'] : [])].join(' and ');
  return { code: 'hype', points, detail };
};

export const spamVocabulary: ContentRule = ({ message }) => {
  const odds = spamLogOdds(message);
  const { oddsPerPoint, maxPoints } = SPAM_WEIGHTS.spamVocabulary;
  const points = Math.min(Math.round((odds / oddsPerPoint) * 10) / 10, maxPoints);
  if (points < 0.5) return null;
  return { code: 'spam_vocabulary', points, detail: `words of spam more than of briefs (log-odds ${odds})` };
};

export const offTopic: ContentRule = ({ message, company }) => {
  if (namesStudioWork(`${message}\n${company ?? ''}`)) return null;
  return { code: 'off_topic', points: SPAM_WEIGHTS.offTopic, detail: 'nothing of a website, app, shop, brand or design named' };
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
  obfuscatedText,
  salesPitch,
  roleName,
  hype,
  spamVocabulary,
  offTopic,
];

export const SIGNAL_RULES: readonly SignalRule[] = [honeypot, proofOfWork, repeatedMessage];

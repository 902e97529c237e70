// Finding links and email addresses in free text: with a scheme, starting with www., or a bare
// domain under a common top-level domain ("studio.pt", "example.com/pricing").

const GENERIC_TLDS =
  'com|net|org|info|biz|io|co|ai|app|dev|me|tv|cc|ws|xyz|online|site|website|store|shop|tech|top|club|live|pro|link|click|space|fun|vip|win|bet|casino|loan|money|finance|agency|digital|media|email|blog|cloud|page|one|today|world|love|life|ltd|news|sale|bio|lol|cam|icu|buzz|rest|work|monster|cyou|sbs|cfd|pw|su|gg|ly|gd';
const COUNTRY_TLDS =
  'ae|ar|at|au|be|bg|br|ca|ch|cl|cn|cz|de|dk|ee|es|eu|fi|fr|gr|hk|hr|hu|id|ie|il|in|is|it|jp|kr|lt|lu|lv|mx|my|nl|no|nz|ph|pk|pl|pt|ro|rs|ru|sa|se|sg|si|sk|th|tr|tw|ua|uk|us|vn|za';

export const LINK_PATTERN = new RegExp(
  [
    String.raw`\b(?:https?|ftp):\/\/[^\s<>"'()\[\]]+`,
    String.raw`\bwww\.[^\s<>"'()\[\]]+`,
    String.raw`(?<![\p{L}\p{N}@._-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:${GENERIC_TLDS}|${COUNTRY_TLDS})\b(?![.-]?[\p{L}\p{N}])(?:\/[^\s<>"'()\[\]]*)?`,
  ].join('|'),
  'giu',
);

export const EMAIL_PATTERN = /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;

export const MARKUP_LINK_PATTERN = /<a\s[^>]*href|\[url[=\]]|\[link[=\]]/i;

/** Public URL shorteners: their links hide where they go. */
const SHORTENER_HOSTS = new Set([
  'bit.ly',
  'bitly.com',
  'tinyurl.com',
  'goo.gl',
  't.co',
  'ow.ly',
  'is.gd',
  'v.gd',
  'buff.ly',
  'rebrand.ly',
  'cutt.ly',
  'shorturl.at',
  'tiny.cc',
  'rb.gy',
  'bit.do',
  's.id',
  't.ly',
  'shorte.st',
  'adf.ly',
  'tiny.one',
  'short.io',
  'qrco.de',
  'lnkd.in',
  'clck.ru',
]);

const NO_LINKS: readonly string[] = Object.freeze([]);

/** The last few texts' links: several rules read the same fields of one inquiry. */
const recentLinks = new Map<string, readonly string[]>();

/** A link has "://", "www." or a dot before a letter (ſ and K fold to s and k); most texts have none. */
const MAY_HAVE_LINK = /:\/\/|www\.|\.[a-z\u017f\u212a]/i;

/** Every link in the text, email addresses aside, in order of appearance. */
export function findLinks(text: string): readonly string[] {
  if (!MAY_HAVE_LINK.test(text)) return NO_LINKS;
  let links = recentLinks.get(text);
  if (links === undefined) {
    const bare = text.includes('@') ? text.replace(EMAIL_PATTERN, ' ') : text;
    links = Object.freeze(bare.match(LINK_PATTERN) ?? []);
    if (recentLinks.size >= 8) recentLinks.clear();
    recentLinks.set(text, links);
  }
  return links;
}

export function findEmailAddresses(text: string): string[] {
  return text.includes('@') ? (text.match(EMAIL_PATTERN) ?? []) : [];
}

export function hostOf(link: string): string {
  const host = link
    .replace(/^[a-z]+:\/\//i, '')
    .split(/[/?#:]/, 1)[0]
    ?.toLowerCase();
  return (host ?? '').replace(/^www\./, '');
}

export function isShortener(link: string): boolean {
  return SHORTENER_HOSTS.has(hostOf(link));
}

export function hasMarkupLink(text: string): boolean {
  return (text.includes('<') || text.includes('[')) && MARKUP_LINK_PATTERN.test(text);
}

/** A link someone means to be followed: a scheme, www., or a path after the domain. */
export function isExplicitLink(link: string): boolean {
  return /^(?:[a-z]+:\/\/|www\.)/i.test(link) || link.includes('/');
}

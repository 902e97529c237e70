// Throwaway mail domains, from the list the mailchecker package maintains (updated with it).
import mailchecker from 'mailchecker';

const DISPOSABLE_DOMAINS: ReadonlySet<string> = mailchecker.blacklist();

/** Forwarding services hiding a person's lasting address (the list has them): replies do reach them. */
const PRIVACY_RELAYS = new Set([
  'duck.com',
  'mozmail.com',
  'relay.firefox.com',
  'simplelogin.com',
  'simplelogin.co',
  'aleeas.com',
  'slmail.me',
  'anonaddy.me',
  'addy.io',
  'passmail.net',
]);

/** The listed domain the address is at or under ("x.mailinator.com" -> "mailinator.com"), if any. */
export function disposableDomainOf(email: string): string | null {
  let domain = email
    .slice(email.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  while (domain.includes('.')) {
    if (PRIVACY_RELAYS.has(domain)) return null;
    if (DISPOSABLE_DOMAINS.has(domain)) return domain;
    domain = domain.slice(domain.indexOf('.') + 1);
  }
  return null;
}

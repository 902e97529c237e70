// Throwaway mail domains, from the list the mailchecker package maintains (updated with it).
import mailchecker from 'mailchecker';

const DISPOSABLE_DOMAINS: ReadonlySet<string> = mailchecker.blacklist();

/** The listed domain the address is at or under ("x.mailinator.com" -> "mailinator.com"), if any. */
export function disposableDomainOf(email: string): string | null {
  let domain = email
    .slice(email.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  while (domain.includes('.')) {
    if (DISPOSABLE_DOMAINS.has(domain)) return domain;
    domain = domain.slice(domain.indexOf('.') + 1);
  }
  return null;
}

// Signing in to the inbox in process: a link from the service's own access (as `inbox-link`
// prints), spent through the pages' forms, and the session's cookie and CSRF token read back.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../src/services.js';

export const ORIGIN = 'http://localhost:3000';

export interface SignedIn {
  /** The Cookie header to send. */
  readonly cookie: string;
  readonly csrf: string;
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
export const FORM = 'application/x-www-form-urlencoded';

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token in the page');
  return match[1] as string;
}

export async function linkToken(services: Services, email: string): Promise<string> {
  const link = await services.inbox?.access.printableLink(email);
  if (!link) throw new Error(`${email} may not sign in`);
  return new URL(link).searchParams.get('token') as string;
}

export async function signIn(app: FastifyInstance, services: Services, email: string): Promise<SignedIn> {
  const token = await linkToken(services, email);
  const answer = await app.inject({
    method: 'POST',
    url: '/inbox/session',
    headers: { 'content-type': FORM, origin: ORIGIN },
    payload: form({ token }),
  });
  if (answer.statusCode !== 303) throw new Error(`sign-in answered ${answer.statusCode}`);
  const cookie = String(answer.headers['set-cookie']).split(';')[0] as string;
  const page = await app.inject({ method: 'GET', url: '/inbox', headers: { cookie } });
  return { cookie, csrf: csrfOf(page.body) };
}

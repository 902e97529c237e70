// The CLI's inbox commands as the studio runs them, beside a running service: `inbox-link` prints a
// link that signs in once, and `sessions revoke --all` ends every session.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { FORM, form, ORIGIN } from '../helpers/inbox.js';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ env: { INBOX_USERS: 'studio@example.com' } });
  env = { DATABASE_URL: `sqlite:${join(t.dir, 'studio.db')}`, INBOX_USERS: 'studio@example.com', PUBLIC_URL: ORIGIN };
});
afterAll(() => t?.close());

const spend = (token: string) =>
  t.app.inject({ method: 'POST', url: '/inbox/session', headers: { 'content-type': FORM, origin: ORIGIN }, payload: form({ token }) });

describe('studio-inquiry inbox-link and sessions', () => {
  it('prints a one-time sign-in link for a user, in any case', async () => {
    const run = await runCli(['inbox-link', 'Studio@Example.com'], env);
    expect(run.code).toBe(0);
    const link = /^(http:\/\/localhost:3000\/inbox\/sign-in\?token=[A-Za-z0-9_-]{43})\n/.exec(run.stdout)?.[1];
    expect(link).toBeDefined();
    expect(run.stdout).toContain('It works once, within 15 minutes, for studio@example.com.');
    const token = new URL(link as string).searchParams.get('token') as string;
    expect((await spend(token)).statusCode).toBe(303);
    expect((await spend(token)).statusCode).toBe(400);
  });

  it('refuses an address that may not sign in, no address, and a database without an inbox', async () => {
    const stranger = await runCli(['inbox-link', 'someone@example.org'], env);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toBe('studio-inquiry: someone@example.org is not one of INBOX_USERS, so it cannot sign in\n');
    expect((await runCli(['inbox-link'], env)).code).toBe(2);
    const { INBOX_USERS: _users, ...without } = env;
    const none = await runCli(['inbox-link', 'studio@example.com'], without);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('there is no inbox');
  });

  it('revokes every session', async () => {
    const link = (await runCli(['inbox-link', 'studio@example.com'], env)).stdout.split('\n')[0] as string;
    const signedIn = await spend(new URL(link).searchParams.get('token') as string);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string;
    expect((await t.app.inject({ method: 'GET', url: '/inbox/overview', headers: { cookie } })).statusCode).toBe(200);
    expect((await runCli(['sessions', 'revoke'], env)).code).toBe(2);
    const run = await runCli(['sessions', 'revoke', '--all'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Revoked [1-9]\d* inbox sessions?: everybody signs in again\.\n$/);
    expect((await t.app.inject({ method: 'GET', url: '/inbox/overview', headers: { cookie } })).statusCode).toBe(401);
  });
});

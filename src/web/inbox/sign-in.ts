// The inbox's sign-in pages: the form asking for an address, the same answer whoever asks, and the
// page a mailed link opens, whose button (a POST) spends the link: a mail scanner's GET does not.
import { escapeHtml as e } from '../html.js';
import { type PageContext, renderPage } from './layout.js';

/** The hidden field carrying where to go once signed in (an inquiry's page), if anywhere. */
const nextField = (next?: string) => (next ? `<input type="hidden" name="next" value="${e(next)}">` : '');

export function signInForm(context: PageContext, note = '', next?: string): string {
  const body = `<h1>Sign in</h1>
${note === '' ? '' : `<p class="notice" role="status">${e(note)}</p>`}
<p>Enter your address: if it may use this inbox, a sign-in link is mailed to it. The link works once, within 15 minutes.</p>
<form method="post" action="${e(context.root)}/sign-in" class="stack">${nextField(next)}
<div class="field">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required spellcheck="false">
</div>
<button type="submit" class="button">Mail me a sign-in link</button>
</form>`;
  return renderPage(context, { title: 'Sign in', body });
}

export function linkSent(context: PageContext): string {
  const body = `<h1>Check your mail</h1>
<p role="status">If that address may use this inbox, a sign-in link is on its way. It works once, within 15 minutes.</p>
<p><a href="${e(context.root)}">Ask for another link</a></p>`;
  return renderPage(context, { title: 'Check your mail', body });
}

export function confirmSignIn(context: PageContext, token: string, next?: string): string {
  const body = `<h1>Sign in</h1>
<p>Sign in to the inbox on this device.</p>
<form method="post" action="${e(context.root)}/session" class="stack">
<input type="hidden" name="token" value="${e(token)}">${nextField(next)}
<button type="submit" class="button">Sign in</button>
</form>`;
  return renderPage(context, { title: 'Sign in', body });
}

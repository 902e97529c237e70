// The inbox's page shell (docs/inbox.md): server-rendered, every value escaped, one stylesheet and
// one script from this service (the CSP's 'self'), noindex, and the header with its navigation.
import { escapeHtml as e, oneLine } from '../html.js';

export interface InboxAssets {
  /** Versioned paths of the stylesheet and the script, base path included. */
  /** The stylesheets, in order (base.css, then the inbox's). */
  readonly css: readonly string[];
  readonly js: string;
}

/** What every page of the inbox knows: where it is served, and who is signed in. */
export interface PageContext {
  /** The inbox's path below PUBLIC_URL's base path, e.g. /inbox or /studio/inbox. */
  readonly root: string;
  readonly studioName: string;
  readonly assets: InboxAssets;
  /** STUDIO_TIMEZONE: the zone the pages show times in. */
  readonly timeZone: string;
  /** The signed-in user and the session's CSRF token; absent on the sign-in pages. */
  readonly user?: { readonly email: string; readonly csrfToken: string };
}

export interface PageParts {
  readonly title: string;
  readonly body: string;
  /** Which navigation entry is the current page. */
  readonly current?: 'list' | 'overview';
  /** Shown above the page's content (delivery alerts). */
  readonly banner?: string;
}

/** A form's hidden CSRF field for the signed-in session. */
export const csrfField = (context: PageContext) =>
  context.user ? `<input type="hidden" name="_csrf" value="${e(context.user.csrfToken)}">` : '';

export function renderPage(context: PageContext, { title, body, current, banner = '' }: PageParts): string {
  const studio = e(oneLine(context.studioName));
  const nav = context.user
    ? `<nav class="top__nav" aria-label="Inbox">
<a href="${e(context.root)}"${current === 'list' ? ' aria-current="page"' : ''}>Inquiries</a>
<a href="${e(context.root)}/overview"${current === 'overview' ? ' aria-current="page"' : ''}>Overview</a>
<form method="post" action="${e(context.root)}/sign-out" class="top__signout">${csrfField(context)}<button type="submit" class="link-button">Sign out <span class="visually-hidden">${e(context.user.email)}</span></button></form>
</nav>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${e(title)} — Inbox of ${studio}</title>
${context.assets.css.map((css) => `<link rel="stylesheet" href="${e(css)}">`).join('\n')}
<script src="${e(context.assets.js)}" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="top">
<p class="top__name">Inbox · ${studio}</p>
${nav}
</header>
${banner}
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

/** A short page of text with an optional extra block (a form, a link). */
export function messagePage(context: PageContext, title: string, text: string, extra = ''): string {
  return renderPage(context, { title, body: `<h1>${e(title)}</h1>\n<p>${e(text)}</p>\n${extra}` });
}

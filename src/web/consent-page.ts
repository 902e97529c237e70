// The sign-in page of /oauth/authorize: who asks, where the person goes back to, their email address,
// then the mailed code, approve or deny. Plain forms, no script; every value escaped.
import type { ConsentView } from '../auth/authorization.js';
import { escapeHtml as e } from './html.js';

export interface ConsentPageOptions {
  readonly studioName: string;
  /** The stylesheet's path (base path included). */
  /** The stylesheets, in order (base.css, then the page's). */
  readonly css: readonly string[];
  /** Where the form posts (base path included). */
  readonly action: string;
}

const layout = (title: string, css: readonly string[], body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
${css.map((sheet) => `<link rel="stylesheet" href="${e(sheet)}">`).join('\n')}
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

export function renderConsentPage(view: ConsentView, { studioName, css, action }: ConsentPageOptions): string {
  const error = view.error ? `<p class="error" role="alert" id="form-error">${e(view.error)}</p>` : '';
  const described = view.error ? ' aria-describedby="form-error" aria-invalid="true"' : '';
  const fields =
    view.step === 'email'
      ? `<label for="email">Your email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${e(view.email ?? '')}"${described}>
<div class="actions">
<button class="primary" type="submit" name="action" value="send_code">Email me a code</button>
<button class="secondary" type="submit" name="action" value="deny" formnovalidate>Deny</button>
</div>`
      : `<p>We mailed a 6-digit code to <strong>${e(view.email ?? '')}</strong>. It expires in 15 minutes.</p>
<label for="otp">Code from the mail</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${described}>
<div class="actions">
<button class="primary" type="submit" name="action" value="approve">Approve</button>
<button class="secondary" type="submit" name="action" value="deny" formnovalidate>Deny</button>
<button class="secondary" type="submit" name="action" value="restart" formnovalidate>Use another address</button>
</div>`;
  return layout(
    `Sign in to ${studioName}`,
    css,
    `<h1>Sign in to ${e(studioName)}</h1>
<p><strong>${e(view.clientName)}</strong> asks to send inquiries to ${e(studioName)} in your name, attributed to your email address.</p>
<p class="destination">After you answer you will be sent back to <strong>${e(view.redirectOrigin)}</strong> (${e(view.redirectUri)}).</p>
${error}
<form method="post" action="${e(action)}">
<input type="hidden" name="request" value="${e(view.id)}">
${fields}
</form>`,
  );
}

/** A sign-in that cannot go on (an unknown client, a redirect URI not registered, an expired page). */
export function renderRefusalPage(message: string, { studioName, css }: Omit<ConsentPageOptions, 'action'>): string {
  return layout(
    `Sign-in to ${studioName} stopped`,
    css,
    `<h1>This sign-in cannot go on</h1>
<p class="error" role="alert">${e(message)}</p>
<p>Nothing was shared. You can close this page.</p>`,
  );
}

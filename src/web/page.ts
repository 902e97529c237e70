// The contact page (GET /): HTML rendered once from the studio profile, no inline script or style (the
// CSP). The form starts hidden behind a note with the studio's address (without site.js it would post to
// a dead end); site.js, in <head>, marks html.scripted before first paint, so the form takes the note's place.
import { basePath } from '../auth/urls.js';
import { INQUIRY_LIMITS } from '../inquiries/schema.js';
import type { StudioProfile } from '../studio/profile.js';
import { escapeHtml as e, mailtoUrl, oneLine, safeHttpUrl } from './html.js';
import { WEBMCP_TOOL_NAME } from './texts.js';

export interface PageAssets {
  /** Versioned paths (…?v=<content hash>), base path included, of the stylesheet, the scripts (in order) and the icon. */
  /** The stylesheets, in order (base.css, then the page's). */
  readonly css: readonly string[];
  readonly js: readonly string[];
  readonly icon: string;
  /** The proof-of-work worker, versioned likewise. */
  readonly powWorker: string;
}

/** Where the form posts, below the service's base path (basePath of PUBLIC_URL). */
export const CONTACT_PATH = '/api/contact';
/** Where the page fetches a proof-of-work challenge. */
export const CHALLENGE_PATH = '/api/contact/challenge';
/** The honeypot's name: one bots expect a value for. */
const HONEYPOT_FIELD = 'website';

interface FieldSpec {
  readonly name: string;
  readonly label: string;
  readonly type: 'text' | 'email' | 'textarea';
  readonly autocomplete: string;
  /** The schema's maxLength, in characters (code points) as the API counts them. */
  readonly maxLength: number;
  readonly required: boolean;
  readonly hint?: string;
  /** Shows a live count against maxLength: for the one field whose limit a person can reach. */
  readonly counted?: boolean;
  /** What the value means, for an agent filling the form as a WebMCP tool (its limits it reads from the form). */
  readonly toolDescription: string;
}

const FIELDS: readonly FieldSpec[] = [
  {
    name: 'firstName',
    label: 'First name',
    type: 'text',
    autocomplete: 'given-name',
    maxLength: INQUIRY_LIMITS.nameMaxLength,
    required: true,
    toolDescription: 'The first name of the person the studio replies to, e.g. Ada.',
  },
  {
    name: 'lastName',
    label: 'Last name',
    type: 'text',
    autocomplete: 'family-name',
    maxLength: INQUIRY_LIMITS.nameMaxLength,
    required: true,
    toolDescription: 'Their last name, e.g. Lovelace.',
  },
  {
    name: 'email',
    label: 'Email',
    type: 'email',
    autocomplete: 'email',
    maxLength: INQUIRY_LIMITS.emailMaxLength,
    required: true,
    toolDescription: 'Their own email address, where the studio replies, e.g. ada@example.com.',
  },
  {
    name: 'company',
    label: 'Company',
    type: 'text',
    autocomplete: 'organization',
    maxLength: INQUIRY_LIMITS.companyMaxLength,
    required: false,
    toolDescription: 'Their company or product, if any, e.g. Analytical Engines Ltd. Leave it out otherwise.',
  },
  {
    name: 'message',
    label: 'Message',
    type: 'textarea',
    autocomplete: 'off',
    maxLength: INQUIRY_LIMITS.messageMaxLength,
    required: true,
    hint: 'What are you planning, and roughly when? Links, budget and deadlines all help.',
    counted: true,
    toolDescription:
      'The project brief in the person’s words: what they are planning and roughly when, with any links, budget and deadlines.',
  },
];

export function renderContactPage(profile: StudioProfile, publicUrl: string, assets: PageAssets): string {
  const root = basePath(publicUrl);
  const name = e(oneLine(profile.name));
  const website = safeHttpUrl(profile.website);
  const email = e(profile.email);
  const mailto = e(mailtoUrl(profile.email));
  const responseTime = e(oneLine(profile.responseTime));
  const websiteLink = website ? `<a class="site-header__link" href="${e(website)}">${e(displayHost(website))}</a>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Contact — ${name}</title>
<meta name="description" content="${e(oneLine(profile.description))}">
<meta name="theme-color" content="#f6f5f1">
<link rel="canonical" href="${e(publicUrl)}/">
<link rel="icon" href="${e(assets.icon)}" type="image/svg+xml">
${assets.css.map((css) => `<link rel="stylesheet" href="${e(css)}">`).join('\n')}
${assets.js.map((js) => `<script src="${e(js)}"></script>`).join('\n')}
</head>
<body>
<a class="skip-link" href="#inquiry">Skip to contact</a>
<header class="site-header">
<div class="container site-header__inner">
<span class="site-header__name">${name}</span>
${websiteLink}
</div>
</header>
<main class="container layout">
<div class="intro">
<h1>${name}</h1>
<p class="intro__lead">${e(profile.description)}</p>
<ul class="facts">
<li><span class="facts__label">Based in</span> ${e(oneLine(profile.location))}</li>
<li><span class="facts__label">Replies within</span> ${responseTime}</li>
<li><span class="facts__label">Email</span> <a href="${mailto}">${email}</a></li>
</ul>
</div>
<section id="inquiry" class="inquiry" aria-labelledby="inquiry-title">
<h2 id="inquiry-title">Start a project</h2>
<p class="inquiry__intro">Tell us a little about it. We reply within ${responseTime}.</p>
<p id="inquiry-fallback" class="notice">Email us at <a href="${mailto}">${email}</a>: what are you planning, and roughly when?</p>
<form id="inquiry-form" class="form" action="${e(root)}${CONTACT_PATH}" method="post" novalidate hidden ${toolAttributes(profile)} data-studio-email="${email}" data-challenge-url="${e(root)}${CHALLENGE_PATH}" data-pow-worker="${e(assets.powWorker)}">
<p class="form__note">All fields are required unless marked optional.</p>
<div class="form__row">
${FIELDS.map(renderField).join('\n')}
</div>
${HONEYPOT}
<div class="form__actions">
<button type="submit" class="button"><span class="button__label">Send inquiry</span></button>
</div>
</form>
<div id="form-status" class="status" role="status" aria-live="polite"></div>
</section>
<section class="services" aria-labelledby="services-title">
<h2 id="services-title">Services</h2>
<ul class="services__list">
${profile.services.map((service) => `<li class="service"><h3 class="service__name">${e(oneLine(service.name))}</h3><p class="service__description">${e(service.description)}</p></li>`).join('\n')}
</ul>
</section>
</main>
<footer class="site-footer">
<div class="container site-footer__inner">
<p>${name} · ${e(oneLine(profile.location))} · <a href="${mailto}">${email}</a></p>
<nav aria-label="For developers and AI agents">
<ul class="site-footer__links">
<li><a href="${e(root)}/docs">API reference</a></li>
<li><a href="${e(root)}/auth.md">Agent auth</a></li>
<li><a href="${e(root)}/llms.txt">llms.txt</a></li>
</ul>
</nav>
</div>
</footer>
</body>
</html>
`;
}

/**
 * The form as a WebMCP tool (the declarative API: toolname, tooldescription, and each field's
 * toolparamdescription). No toolautosubmit: the agent fills the form in, the person checks what is
 * sent in their name and presses Send; site.js hands the agent what the page then shows.
 */
function toolAttributes(profile: StudioProfile): string {
  const description =
    `Send a project inquiry to ${oneLine(profile.name)}, who reply by email within ${oneLine(profile.responseTime)}. ` +
    'Use it when the person wants to hire the studio or ask about a project. The answer holds the inquiry’s reference.';
  return `toolname="${WEBMCP_TOOL_NAME}" tooldescription="${e(description)}"`;
}

/**
 * A field only bots fill (docs/spam.md): out of sight, out of the tab order and the accessibility
 * tree (aria-hidden, inert), never autofilled; site.js leaves it out of the body, signals.js reports it.
 * Read-only, so that it is no parameter of the WebMCP tool: inert already keeps typing out of it.
 */
const HONEYPOT = `<div class="form__trap" aria-hidden="true" inert>
<label for="${HONEYPOT_FIELD}">Website</label>
<input id="${HONEYPOT_FIELD}" name="${HONEYPOT_FIELD}" type="text" tabindex="-1" autocomplete="off" readonly data-honeypot>
</div>`;

function renderField(field: FieldSpec): string {
  const id = field.name;
  const describedBy = [field.hint ? `${id}-hint` : '', field.counted ? `${id}-count` : ''].filter(Boolean).join(' ');
  const required = field.required ? ' required' : '';
  // No maxlength: browsers cut what is pasted beyond it without a word, and count UTF-16 units (an
  // emoji is two), where the API counts characters. site.js checks data-max-length before sending.
  const common = `id="${id}" name="${id}" data-max-length="${field.maxLength}" autocomplete="${field.autocomplete}"${required}${describedBy ? ` aria-describedby="${describedBy}"` : ''} toolparamdescription="${e(field.toolDescription)}"`;
  const control =
    field.type === 'textarea'
      ? `<textarea ${common} rows="7"></textarea>`
      : `<input ${common} type="${field.type}"${field.type === 'email' ? ' inputmode="email" spellcheck="false"' : ''}>`;
  const optional = field.required ? '' : ' <span class="field__optional">(optional)</span>';
  const hint = field.hint ? `\n<p class="field__hint" id="${id}-hint">${e(field.hint)}</p>` : '';
  // The count is read with the field (aria-describedby); the live region says it aloud only near the limit.
  const count = field.counted
    ? `\n<p class="field__count" id="${id}-count">Up to ${field.maxLength.toLocaleString('en-US')} characters</p>\n<p class="visually-hidden" id="${id}-count-live" aria-live="polite"></p>`
    : '';
  const wide = field.name === 'firstName' || field.name === 'lastName' ? '' : ' field--wide';
  return `<div class="field${wide}" data-field="${id}" data-label="${e(field.label)}">
<label class="field__label" for="${id}">${e(field.label)}${optional}</label>${hint}
${control}${count}
<p class="field__error" id="${id}-error" hidden></p>
</div>`;
}

function displayHost(url: string): string {
  const parsed = new URL(url);
  return parsed.host + (parsed.pathname === '/' ? '' : parsed.pathname);
}

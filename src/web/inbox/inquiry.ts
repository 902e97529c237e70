// One inquiry (GET /inbox/inquiries/:reference): every field, the verdict and its reasons, each
// delivery with each attempt, and the actions, each a form carrying the session's CSRF token.
import type { InquiryInFull } from '../../inbox/service.js';
import type { DeliveryAttempt, DeliveryRecord } from '../../storage/ports.js';
import { escapeHtml as e, mailtoUrl } from '../html.js';
import { csrfField, type PageContext, renderPage } from './layout.js';
import { deliveryState, fullName, sourceText, statusBadge, timeTag } from './parts.js';

/** What an action did, said once on the page it returns to (its `done` parameter). */
export const DONE_NOTES = {
  read: 'Marked as read.',
  new: 'Marked as unread.',
  archived: 'Archived.',
  spam: 'Moved to spam. Deliveries already made stay made.',
  released: 'Released from spam: its deliveries are queued and go out within seconds.',
  requeued: 'Failed deliveries are queued again.',
  unchanged: 'Nothing changed: it was so already.',
  nothing: 'Nothing to send again: no delivery failed.',
} as const;
export type DoneNote = keyof typeof DONE_NOTES;

const row = (label: string, value: string) => `<div class="facts__row"><dt>${e(label)}</dt><dd>${value}</dd></div>`;

function actionForm(context: PageContext, reference: string, path: string, fields: Record<string, string>, label: string, tone = '') {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${e(name)}" value="${e(value)}">`)
    .join('');
  return `<form method="post" action="${e(context.root)}/inquiries/${e(reference)}/${path}">${csrfField(context)}${hidden}<button type="submit" class="button${tone}">${e(label)}</button></form>`;
}

function attemptRow(attempt: DeliveryAttempt, timeZone: string): string {
  return `<tr><td>${attempt.attempt}</td><td>${timeTag(attempt.attemptedAt, timeZone)}</td><td>${e(attempt.outcome)}</td><td>${attempt.durationMs} ms</td><td>${attempt.error === null ? '' : `<span class="error-text">${e(attempt.error)}</span>`}</td></tr>`;
}

function deliverySection(delivery: DeliveryRecord, attempts: readonly DeliveryAttempt[], timeZone: string): string {
  const id = `delivery-${e(delivery.channel)}`;
  const table =
    attempts.length === 0
      ? '<p class="muted">No attempt yet.</p>'
      : `<div class="table-scroll" role="region" aria-label="Attempts of the ${e(delivery.channel)} delivery" tabindex="0"><table class="attempts">
<thead><tr><th scope="col">Attempt</th><th scope="col">Time</th><th scope="col">Outcome</th><th scope="col">Took</th><th scope="col">Error</th></tr></thead>
<tbody>${attempts.map((attempt) => attemptRow(attempt, timeZone)).join('')}</tbody></table></div>`;
  return `<section class="delivery-block" aria-labelledby="${id}">
<h3 id="${id}">${e(delivery.channel)}: ${deliveryState(delivery)}</h3>
${delivery.lastError === null ? '' : `<p>Last error: <span class="error-text">${e(delivery.lastError)}</span></p>`}
${table}
</section>`;
}

export function inquiryPage(context: PageContext, full: InquiryInFull, done?: DoneNote, banner = ''): string {
  const { inquiry, status, agentName, agentVerifiedEmail, judgement, deliveries, attempts } = full;
  const ref = inquiry.reference;
  const reply = `${mailtoUrl(inquiry.email)}?subject=${encodeURIComponent(`Re: your inquiry ${ref}`)}`;
  const reasons =
    judgement.reasons.length === 0
      ? ''
      : `<ul class="reasons">${judgement.reasons.map(({ code, detail }) => `<li><code>${e(code)}</code> ${e(detail)}</li>`).join('')}</ul>`;
  const verdict = `${judgement.verdict === 'spam' ? 'Spam' : 'Inbox'} (score ${judgement.score})${judgement.releasedAt ? `, released from spam ${timeTag(judgement.releasedAt, context.timeZone)}` : ''}`;
  const stateActions =
    status === 'spam'
      ? ''
      : [
          status === 'new'
            ? actionForm(context, ref, 'state', { state: 'read' }, 'Mark as read')
            : actionForm(context, ref, 'state', { state: 'new' }, 'Mark as unread'),
          status === 'archived'
            ? actionForm(context, ref, 'state', { state: 'read' }, 'Move back to the inbox')
            : actionForm(context, ref, 'state', { state: 'archived' }, 'Archive'),
        ].join('');
  const verdictAction =
    judgement.verdict === 'spam'
      ? actionForm(context, ref, 'verdict', { verdict: 'inbox' }, 'Not spam: release and deliver')
      : actionForm(context, ref, 'verdict', { verdict: 'spam' }, 'Mark as spam');
  const requeue = deliveries.some((delivery) => delivery.status === 'failed' || delivery.status === 'dead')
    ? actionForm(context, ref, 'requeue', {}, 'Send failed deliveries again')
    : '';
  const body = `<p class="back"><a href="${e(context.root)}">← All inquiries</a></p>
<h1>${e(fullName(inquiry))} <span class="muted">${e(ref)}</span></h1>
${done === undefined ? '' : `<p class="notice" role="status">${e(DONE_NOTES[done])}</p>`}
<div class="actions" role="group" aria-label="Actions">
<a class="button" href="${e(reply)}">Reply by mail</a>
${stateActions}${verdictAction}${requeue}
<a class="button button--danger" href="${e(context.root)}/inquiries/${e(ref)}/erase">Erase this person…</a>
</div>
<dl class="facts">
${row('Status', statusBadge(status))}
${row('Received', timeTag(inquiry.receivedAt, context.timeZone))}
${row('Name', e(fullName(inquiry)))}
${row('Email', `<a href="${e(mailtoUrl(inquiry.email))}">${e(inquiry.email)}</a>`)}
${row('Company', inquiry.company === null ? '<span class="muted">none given</span>' : e(inquiry.company))}
${row('Source', sourceText(inquiry, agentName, agentVerifiedEmail))}
${inquiry.clientId === null ? '' : row('Agent client ID', `<code>${e(inquiry.clientId)}</code>`)}
${row('Verdict', verdict + reasons)}
</dl>
<h2>Message</h2>
<div class="message">${e(inquiry.message)}</div>
<h2>Deliveries</h2>
${deliveries.length === 0 ? '<p class="muted">None: no delivery channel was configured when it arrived, or it is spam.</p>' : deliveries.map((delivery) => deliverySection(delivery, attempts.get(delivery.id) ?? [], context.timeZone)).join('\n')}`;
  return renderPage(context, { title: `${fullName(inquiry)} (${ref})`, body, current: 'list', banner });
}

export function erasePage(context: PageContext, full: InquiryInFull): string {
  const { inquiry } = full;
  const body = `<p class="back"><a href="${e(context.root)}/inquiries/${e(inquiry.reference)}">← Back to the inquiry</a></p>
<h1>Erase ${e(inquiry.email)}?</h1>
<p>This deletes everything held about <strong>${e(inquiry.email)}</strong>: every inquiry sent from that address (not only this one), their deliveries, agent registrations and claims, and mails to it. It cannot be undone.</p>
<form method="post" action="${e(context.root)}/inquiries/${e(inquiry.reference)}/erase" class="stack">${csrfField(context)}
<div class="check"><input id="confirm" name="confirm" type="checkbox" value="yes" required><label for="confirm">Yes, erase everything held about this address</label></div>
<button type="submit" class="button button--danger">Erase</button>
</form>`;
  return renderPage(context, { title: `Erase ${inquiry.email}`, body, current: 'list' });
}

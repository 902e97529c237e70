// The inquiry form: sends the fields as JSON to the contact endpoint and shows the server's answer.
// The server decides what is valid; this script checks only what it can count (required, maxLength)
// and shows each field error the server names (`errors[].pointer`) next to its field.

(() => {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the page loads this as a classic script, not a module
  'use strict';

  /** A request still unanswered after this long is given up; the retry reuses its Idempotency-Key. */
  const REQUEST_TIMEOUT_MS = 30_000;

  // A classic script in <head>: the page is marked scripted before the first paint, so the form's
  // place is kept from the start (no layout shift). The form, hidden behind a note with the studio's
  // address (without script it could only post form data, a 415), shows once its handlers are set.
  const root = document.documentElement;
  root.classList.add('scripted');
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();

  function start() {
    const form = document.getElementById('inquiry-form');
    try {
      if (!(form instanceof HTMLFormElement)) throw new Error('The page has no #inquiry-form.');
      enhance(form);
    } catch (error) {
      root.classList.remove('scripted');
      throw error;
    }
    form.hidden = false;
    const fallback = document.getElementById('inquiry-fallback');
    if (fallback) fallback.hidden = true;
  }

  /** @param {HTMLFormElement} form */
  function enhance(form) {
    // From counter.js and signals.js, loaded before this script; the form works without signals.
    const { characterCounter, characterCount, formatCount } = window.studioInquiry.counts;
    const signals = window.studioInquiry.signals?.(form);
    const status = /** @type {HTMLElement} */ (document.getElementById('form-status'));
    const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
    const buttonLabel = /** @type {HTMLElement} */ (button.querySelector('.button__label'));
    const idleLabel = buttonLabel.textContent;
    const studioEmail = form.dataset.studioEmail ?? '';
    const fields = [...form.querySelectorAll('[data-field]')].map((wrapper) => {
      const name = /** @type {HTMLElement} */ (wrapper).dataset.field ?? '';
      const control = /** @type {HTMLInputElement | HTMLTextAreaElement} */ (form.elements.namedItem(name));
      const maxLength = Number(control.dataset.maxLength ?? Number.POSITIVE_INFINITY);
      const count = document.getElementById(`${name}-count`);
      const countLive = document.getElementById(`${name}-count-live`);
      return {
        name,
        label: /** @type {HTMLElement} */ (wrapper).dataset.label ?? name,
        control,
        maxLength,
        error: /** @type {HTMLElement} */ (document.getElementById(`${name}-error`)),
        showCount: count && countLive ? characterCounter(count, countLive, maxLength) : null,
      };
    });

    let busy = false;
    /**
     * The last submission that got no definite answer (network failure, timeout, 5xx, 429): sending
     * the same body again reuses its Idempotency-Key, so the server stores it at most once.
     * @type {{ body: string, key: string } | null}
     */
    let unsettled = null;
    /**
     * True from a confirmation until the person types in the form again. The form is emptied on
     * success, so a late second click or Enter would otherwise find every required field empty and
     * replace the confirmation, and its reference, with "Please correct the 4 highlighted fields."
     */
    let confirmed = false;
    /** True while the status region holds the "Please correct …" summary, which follows the fields' errors. */
    let summarised = false;

    for (const field of fields) {
      field.control.addEventListener('input', () => {
        field.showCount?.(field.control.value);
        recheckField(field);
      });
      field.showCount?.(field.control.value); // a value the browser restored counts too
    }
    form.addEventListener('input', () => {
      confirmed = false;
    });

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      // WebMCP: a submission made through the form's tool (page.ts) answers the agent with what the
      // page then shows the person. respondWith must be called while the event is dispatched.
      const viaAgent = event.agentInvoked === true && typeof event.respondWith === 'function';
      const sent = submit(viaAgent);
      if (viaAgent) event.respondWith(sent.then(shownText));
    });

    /** @param {boolean} viaAgent */
    async function submit(viaAgent) {
      if (busy) return; // a second click or Enter while sending: the first request is on its way
      if (confirmed) {
        announceAgain(); // the emptied form sent again: the confirmation stays, and is said again
        return;
      }
      clearErrors();

      const problems = fields.flatMap((field) => {
        const detail = problemOf(field);
        return detail ? [{ field, detail }] : [];
      });
      if (problems.length > 0) {
        showFieldErrors(problems);
        return;
      }

      const body = formBody();
      const key = unsettled?.body === body ? unsettled.key : newIdempotencyKey();
      unsettled = { body, key };

      setBusy(true);
      // The reading of the answer counts too: a server that sends headers and then stalls is no answer.
      const controller = new AbortController();
      const timeout = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
      try {
        const response = await fetch(form.action, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/plain, application/problem+json',
            'idempotency-key': key,
            ...(await signals?.headers()),
          },
          body,
          credentials: 'same-origin',
          signal: controller.signal,
        });
        await showAnswer(response, body, viaAgent);
      } catch {
        showStatus('error', `We could not reach our server. Check your connection and try again${orEmail()}.`);
      } finally {
        clearTimeout(timeout);
        setBusy(false);
      }
    }

    /** The status and each field's error, as the page shows them. */
    function shownText() {
      const errors = fields.filter((field) => !field.error.hidden).map((field) => field.error.textContent ?? '');
      return [status.textContent ?? '', ...errors]
        .map((text) => text.trim())
        .filter(Boolean)
        .join(' ');
    }

    /** The JSON body the form's fields make now. */
    function formBody() {
      const data = {};
      for (const field of fields) {
        const value = sentValue(field);
        if (value !== '' || field.control.required) data[field.name] = value;
      }
      return JSON.stringify(data);
    }

    /**
     * @param {Response} response
     * @param {string} sent the body that was sent
     * @param {boolean} viaAgent sent through the WebMCP tool
     */
    async function showAnswer(response, sent, viaAgent) {
      if (response.ok) {
        const confirmation = (await response.text()).trim();
        unsettled = null; // only once read: an answer cut off on the way is retried under the same key
        // A resend of the same email and message is folded into the first inquiry, keeping its fields:
        // a corrected name or company did not arrive, so say so (a replay of this page's retry repeats
        // the first answer's outcome, so this shows even when that answer was lost on the way).
        if (response.headers.get('inquiry-outcome') === 'duplicate') {
          const reference = /\bINQ-[0-9A-Z]+\b/.exec(confirmation)?.[0];
          showStatus(
            'notice',
            `We already have this inquiry${reference ? ` (reference ${reference})` : ''}. To correct or add something, reply to our email${orEmail('or write to us at')}.`,
          );
          return;
        }
        // What was typed while it was sending was not sent: it stays, to be sent as a new inquiry. What
        // an agent filled in stays in view (a reset would also cancel its tool call before the answer).
        if (formBody() === sent) {
          if (!viaAgent) form.reset();
          for (const field of fields) field.showCount?.(field.control.value);
          confirmed = true;
        }
        showStatus('success', confirmation);
        return;
      }
      if (response.status === 429) {
        const when = retryAfterText(response.headers.get('retry-after'));
        showStatus(
          'error',
          `Your inquiry was not sent: too many inquiries have come from your connection. Please try again ${when}${orEmail()}.`,
        );
        return;
      }
      if (response.status >= 500) {
        showStatus('error', `Something went wrong on our side and your inquiry was not sent. Please try again in a moment${orEmail()}.`);
        return;
      }
      unsettled = null; // a definite refusal: nothing was stored under this key
      if (response.status === 400) {
        const problem = await readProblem(response);
        const shown = [];
        for (const item of Array.isArray(problem?.errors) ? problem.errors : []) {
          const field = fields.find((candidate) => `/${candidate.name}` === item?.pointer);
          if (field && typeof item.detail === 'string') shown.push({ field, detail: item.detail });
        }
        if (shown.length > 0) {
          showFieldErrors(shown);
          return;
        }
      }
      // The server's own detail ("The body is larger than 65536 bytes") is written for developers.
      const why =
        response.status === 413
          ? 'it is longer than our server accepts. Please shorten it'
          : 'our server could not accept it. Please reload the page';
      showStatus('error', `Your inquiry was not sent: ${why} and try again${orEmail()}.`);
    }

    /** @param {(typeof fields)[number]} field */
    function sentValue(field) {
      return field.name === 'message' ? field.control.value : field.control.value.trim();
    }

    /**
     * What can be told before sending: a required field left blank, or a value over the schema's
     * maxLength, counted in characters as the API counts them.
     * @param {(typeof fields)[number]} field
     */
    function problemOf(field) {
      const value = sentValue(field);
      if (field.control.required && value.trim() === '') return 'is required';
      const length = characterCount(value);
      if (length > field.maxLength)
        return `must be at most ${formatCount(field.maxLength)} characters long (it has ${formatCount(length)})`;
      return null;
    }

    /** @param {{ field: (typeof fields)[number], detail: string }[]} errors */
    function showFieldErrors(errors) {
      for (const { field, detail } of errors) setFieldError(field, detail);
      showStatus('error', summaryText(errors.length));
      summarised = true;
      // The first field in the form's order, not in the server's.
      const first = fields.find((field) => errors.some((error) => error.field === field));
      first?.control.focus();
    }

    /**
     * @param {(typeof fields)[number]} field
     * @param {string} detail
     */
    function setFieldError(field, detail) {
      field.error.textContent = `${field.label} ${detail}.`;
      field.error.hidden = false;
      field.control.setAttribute('aria-invalid', 'true');
      // First: read before the field's hint and count, which can be long.
      const describedBy = (field.control.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== field.error.id);
      field.control.setAttribute('aria-describedby', [field.error.id, ...describedBy].join(' '));
    }

    /**
     * A flagged field being edited: its error goes once what this page can check is fine (an error
     * only the server can judge, such as an email's format, goes with the first edit), or follows
     * the value (a message still too long says by how much); the summary counts what is left.
     * @param {(typeof fields)[number]} field
     */
    function recheckField(field) {
      if (field.error.hidden) return;
      const detail = problemOf(field);
      if (detail) setFieldError(field, detail);
      else clearFieldError(field);
      if (!summarised) return;
      const left = fields.filter((candidate) => !candidate.error.hidden).length;
      if (left === 0) clearStatus();
      else if (status.textContent !== summaryText(left)) status.textContent = summaryText(left);
    }

    /** @param {(typeof fields)[number]} field */
    function clearFieldError(field) {
      if (field.error.hidden) return;
      field.error.hidden = true;
      field.error.textContent = '';
      field.control.removeAttribute('aria-invalid');
      const describedBy = (field.control.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== field.error.id);
      if (describedBy.length > 0) field.control.setAttribute('aria-describedby', describedBy.join(' '));
      else field.control.removeAttribute('aria-describedby');
    }

    function clearErrors() {
      for (const field of fields) clearFieldError(field);
      clearStatus();
    }

    function clearStatus() {
      status.textContent = '';
      status.className = 'status';
      summarised = false;
    }

    /**
     * Shows a message in the status region, a polite live region: screen readers say it without
     * focus moving there (WCAG 4.1.3), so focus stays where the person was, and nothing is read
     * twice, as a focused live region can be.
     * @param {'success' | 'notice' | 'error' | 'pending'} kind
     * @param {string} text
     */
    function showStatus(kind, text) {
      status.className = `status status--${kind}`;
      status.textContent = text;
      summarised = false;
    }

    /**
     * Says the status again: a live region speaks only a change, so a no-break space is added to
     * its text, or taken off (nothing that shows, nothing that flickers).
     */
    function announceAgain() {
      const text = status.textContent ?? '';
      status.textContent = text.endsWith('\u00a0') ? text.slice(0, -1) : `${text}\u00a0`;
    }

    /** @param {boolean} on */
    function setBusy(on) {
      busy = on;
      // aria-disabled, not disabled: a disabled button drops its focus to <body>, and with it the
      // place of whoever pressed it. Presses meanwhile are ignored by the busy check on submit.
      if (on) button.setAttribute('aria-disabled', 'true');
      else button.removeAttribute('aria-disabled');
      form.setAttribute('aria-busy', String(on));
      buttonLabel.textContent = on ? 'Sending…' : idleLabel;
      // Announced from the status region, which is outside the form: a screen reader may hold back
      // what changes inside an aria-busy element until it is no longer busy.
      if (on) showStatus('pending', 'Sending your inquiry…');
    }

    /** @param {string} [lead] */
    function orEmail(lead = 'or email us at') {
      return studioEmail ? `, ${lead} ${studioEmail}` : '';
    }
  }

  /** @param {Response} response */
  async function readProblem(response) {
    try {
      const value = await response.json();
      return value && typeof value === 'object' ? value : null;
    } catch {
      return null;
    }
  }

  /** @param {number} count */
  function summaryText(count) {
    return count === 1 ? 'Please correct the highlighted field.' : `Please correct the ${count} highlighted fields.`;
  }

  /** "in 2 minutes", or "later": Retry-After is either seconds or an HTTP date (RFC 9110 §10.2.3). @param {string | null} value */
  function retryAfterText(value) {
    let seconds = Number.NaN;
    if (value !== null && /^\d+$/.test(value.trim())) seconds = Number(value.trim());
    else if (value !== null) seconds = Math.ceil((Date.parse(value) - Date.now()) / 1000);
    if (!Number.isFinite(seconds)) return 'later';
    if (seconds <= 60) {
      const s = Math.max(1, seconds);
      return `in ${s} second${s === 1 ? '' : 's'}`;
    }
    const minutes = Math.ceil(seconds / 60);
    if (minutes < 120) return `in ${minutes} minutes`;
    return `in ${Math.ceil(minutes / 60)} hours`;
  }

  /** A random UUID for the Idempotency-Key; getRandomValues where randomUUID is missing (pages not served over TLS). */
  function newIdempotencyKey() {
    if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
})();

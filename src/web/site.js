// The inquiry form: sends the fields as JSON to the contact endpoint with fetch and shows the
// server's answer. The server decides what is valid; this script only checks that required fields
// are filled in, then shows each field error the server names (`errors[].pointer`) next to its field.

const form = document.getElementById('inquiry-form');
if (form instanceof HTMLFormElement) enhance(form);

/** @param {HTMLFormElement} form */
function enhance(form) {
  const status = /** @type {HTMLElement} */ (document.getElementById('form-status'));
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
  const buttonLabel = /** @type {HTMLElement} */ (button.querySelector('.button__label'));
  const idleLabel = buttonLabel.textContent;
  const studioEmail = form.dataset.studioEmail ?? '';
  const fields = [...form.querySelectorAll('[data-field]')].map((wrapper) => {
    const name = /** @type {HTMLElement} */ (wrapper).dataset.field ?? '';
    return {
      name,
      label: /** @type {HTMLElement} */ (wrapper).dataset.label ?? name,
      control: /** @type {HTMLInputElement | HTMLTextAreaElement} */ (form.elements.namedItem(name)),
      error: /** @type {HTMLElement} */ (document.getElementById(`${name}-error`)),
    };
  });

  let busy = false;
  /**
   * The last submission that got no definite answer (network failure, 5xx, 429): sending the same
   * body again reuses its Idempotency-Key, so the server stores it at most once.
   * @type {{ body: string, key: string } | null}
   */
  let unsettled = null;
  /**
   * True from a confirmation until the person types in the form again. The form is emptied on
   * success, so a late second click or Enter would otherwise find every required field empty and
   * replace the confirmation, and its reference, with "Please correct the 4 highlighted fields."
   */
  let confirmed = false;

  for (const field of fields) field.control.addEventListener('input', () => clearFieldError(field));
  form.addEventListener('input', () => {
    confirmed = false;
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy) return; // a second click or Enter while sending: the first request is on its way
    if (confirmed) {
      status.focus(); // the emptied form sent again: the confirmation stays, and is read out again
      return;
    }
    clearErrors();

    const missing = fields.filter((field) => field.control.required && field.control.value.trim() === '');
    if (missing.length > 0) {
      showFieldErrors(missing.map((field) => ({ field, detail: 'is required' })));
      return;
    }

    const data = {};
    for (const field of fields) {
      const value = field.name === 'message' ? field.control.value : field.control.value.trim();
      if (value !== '' || field.control.required) data[field.name] = value;
    }
    const body = JSON.stringify(data);
    const key = unsettled?.body === body ? unsettled.key : newIdempotencyKey();
    unsettled = { body, key };

    setBusy(true);
    try {
      const response = await fetch(form.action, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/plain, application/problem+json', 'idempotency-key': key },
        body,
        credentials: 'same-origin',
      });
      await showAnswer(response);
    } catch {
      showStatus('error', `We could not reach our server. Check your connection and try again${orEmail()}.`);
    } finally {
      setBusy(false);
    }
  });

  // The page renders the form hidden: without this script it could only post form-encoded data to
  // a JSON API (a 415). Shown once its handlers are in place; the <noscript> note names the email.
  form.hidden = false;

  /** @param {Response} response */
  async function showAnswer(response) {
    if (response.ok) {
      unsettled = null;
      const confirmation = (await response.text()).trim();
      form.reset();
      confirmed = true;
      showStatus('success', confirmation);
      return;
    }
    if (response.status === 429) {
      showStatus('error', `Too many inquiries have been sent from your connection. ${retryAfterText(response.headers.get('retry-after'))}`);
      return;
    }
    if (response.status >= 500) {
      showStatus('error', `Something went wrong on our side and your inquiry was not sent. Please try again in a moment${orEmail()}.`);
      return;
    }
    unsettled = null; // a definite refusal: nothing was stored under this key
    const problem = await readProblem(response);
    if (response.status === 400 && Array.isArray(problem?.errors)) {
      const shown = [];
      for (const item of problem.errors) {
        const field = fields.find((candidate) => `/${candidate.name}` === item?.pointer);
        if (field && typeof item.detail === 'string') shown.push({ field, detail: item.detail });
      }
      if (shown.length > 0) {
        showFieldErrors(shown);
        return;
      }
    }
    const detail = typeof problem?.detail === 'string' ? ` ${problem.detail}` : '';
    showStatus('error', `Your inquiry was not sent.${detail} Please try again${orEmail()}.`);
  }

  /** @param {{ field: (typeof fields)[number], detail: string }[]} errors */
  function showFieldErrors(errors) {
    for (const { field, detail } of errors) {
      field.error.textContent = `${field.label} ${detail}.`;
      field.error.hidden = false;
      field.control.setAttribute('aria-invalid', 'true');
      const describedBy = (field.control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
      if (!describedBy.includes(field.error.id)) describedBy.push(field.error.id);
      field.control.setAttribute('aria-describedby', describedBy.join(' '));
    }
    const count = errors.length;
    showStatus('error', count === 1 ? 'Please correct the highlighted field.' : `Please correct the ${count} highlighted fields.`, false);
    // The first field in the form's order, not in the server's.
    const first = fields.find((field) => errors.some((error) => error.field === field));
    first?.control.focus();
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
    status.textContent = '';
    status.className = 'status';
  }

  /**
   * @param {'success' | 'error'} kind
   * @param {string} text
   * @param {boolean} [focus] move focus to the message (the button that had it is disabled while sending)
   */
  function showStatus(kind, text, focus = true) {
    status.className = `status status--${kind}`;
    status.textContent = text;
    if (focus) status.focus();
  }

  /** @param {boolean} on */
  function setBusy(on) {
    busy = on;
    button.disabled = on;
    form.setAttribute('aria-busy', String(on));
    buttonLabel.textContent = on ? 'Sending…' : idleLabel;
  }

  function orEmail() {
    return studioEmail ? `, or email us at ${studioEmail}` : '';
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

/** Retry-After is either seconds or an HTTP date (RFC 9110 §10.2.3). @param {string | null} value */
function retryAfterText(value) {
  let seconds = Number.NaN;
  if (value !== null && /^\d+$/.test(value.trim())) seconds = Number(value.trim());
  else if (value !== null) seconds = Math.ceil((Date.parse(value) - Date.now()) / 1000);
  if (!Number.isFinite(seconds)) return 'Please try again later.';
  if (seconds <= 60) {
    const s = Math.max(1, seconds);
    return `Please try again in ${s} second${s === 1 ? '' : 's'}.`;
  }
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return `Please try again in ${minutes} minutes.`;
  return `Please try again in ${Math.ceil(minutes / 60)} hours.`;
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

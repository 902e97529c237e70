// What the form sends with an inquiry besides its five fields (docs/api.md, docs/spam.md): a proof of
// work in the `Altcha` header, solved in a Web Worker from the moment the person turns to the form,
// and `Honeypot: filled` when the field only bots see was filled in. Either may be left out: the
// inquiry goes all the same, and a missing proof counts neither for nor against it.

(() => {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the page loads this as a classic script, not a module
  'use strict';

  /** A proof is sent only with this much of its challenge's life left, for the request's own way. */
  const MIN_LIFE_LEFT_MS = 30_000;
  /** A person still at the form when less than this is left gets a new proof, solved meanwhile. */
  const RENEW_BEFORE_MS = 2 * 60_000;
  /** How long sending waits for a proof still being solved; then the inquiry goes without one. */
  const PROOF_WAIT_MS = 3_000;
  /** Fetching the challenge and solving it are given up after this. */
  const SOLVE_TIMEOUT_MS = 30_000;
  /** After a failure (no challenge, no worker), another try waits this long: the form never hammers the service. */
  const RETRY_AFTER_MS = 30_000;

  /**
   * @typedef {{ payload: string, expiresAt: number }} Proof ALTCHA's payload, and when its challenge expires (local clock)
   * @typedef {{ promise: Promise<Proof | null>, startedAt: number, proof?: Proof | null }} Solving settled once `proof` is set
   */

  /** @param {HTMLFormElement} form */
  function signals(form) {
    const { challengeUrl, powWorker } = form.dataset;
    const honeypot = form.querySelector('[data-honeypot]');
    /** @type {Solving | null} the proof not yet sent */
    let next = null;

    /** Starts a proof when there is none, or the one there will not last, or failed a while ago. */
    function prepare() {
      if (!challengeUrl || !powWorker || (next !== null && !stale(next))) return;
      /** @type {Solving} */
      const solving = { promise: solve(challengeUrl, powWorker), startedAt: Date.now() };
      solving.promise.then((proof) => {
        solving.proof = proof;
      });
      next = solving;
    }

    form.addEventListener('focusin', prepare);
    form.addEventListener('input', prepare);

    return {
      /** The headers for one request: each proof goes with one request only. @returns {Promise<Record<string, string>>} */
      async headers() {
        prepare();
        const solving = next;
        next = null;
        const proof = solving && (await Promise.race([solving.promise, delay(PROOF_WAIT_MS)]));
        /** @type {Record<string, string>} */
        const headers = {};
        if (proof && lasts(proof, MIN_LIFE_LEFT_MS)) headers.altcha = proof.payload;
        if (honeypot instanceof HTMLInputElement && honeypot.value !== '') headers.honeypot = 'filled';
        return headers;
      },
    };
  }

  /**
   * Fetches a challenge and solves it in a worker; null when either fails or takes too long.
   * @param {string} challengeUrl
   * @param {string} workerUrl
   * @returns {Promise<Proof | null>}
   */
  async function solve(challengeUrl, workerUrl) {
    /** @type {Worker | undefined} */
    let worker;
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), SOLVE_TIMEOUT_MS);
    try {
      const response = await fetch(challengeUrl, { cache: 'no-store', credentials: 'omit', signal: controller.signal });
      if (!response.ok) return null;
      const challenge = await response.json();
      // The challenge's life as the server's clock counts it: this computer's may be set otherwise.
      const serverNow = Date.parse(response.headers.get('date') ?? '') || Date.now();
      const expiresAt = Date.now() + (challenge.parameters.expiresAt * 1000 - serverNow);
      const solver = new Worker(workerUrl, { type: 'module' });
      worker = solver;
      const solution = await new Promise((resolve) => {
        solver.addEventListener('message', (event) => resolve(event.data));
        solver.addEventListener('error', () => resolve(null));
        controller.signal.addEventListener('abort', () => resolve(null));
        solver.postMessage({ type: 'work', challenge, counterStart: 0, counterStep: 1, timeout: SOLVE_TIMEOUT_MS });
      });
      if (!solution || solution.error) return null;
      return { payload: btoa(JSON.stringify({ challenge, solution })), expiresAt };
    } catch {
      return null;
    } finally {
      clearTimeout(timeout);
      worker?.terminate();
    }
  }

  /** @param {Solving} solving */
  function stale({ proof, startedAt }) {
    if (proof === undefined) return false;
    return proof === null ? Date.now() - startedAt > RETRY_AFTER_MS : !lasts(proof, RENEW_BEFORE_MS);
  }

  /** @param {Proof | null} proof @param {number} ms */
  function lasts(proof, ms) {
    return proof !== null && proof.expiresAt - Date.now() > ms;
  }

  /** @param {number} ms @returns {Promise<null>} */
  function delay(ms) {
    return new Promise((resolve) => setTimeout(() => resolve(null), ms));
  }

  window.studioInquiry ??= {};
  window.studioInquiry.signals = signals;
})();

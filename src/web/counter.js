// The contact form's character counts (site.js uses them): characters counted as the API counts them,
// and the live count under a field. Loaded before site.js, into the page's one namespace.

(() => {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the page loads this as a classic script, not a module
  'use strict';

  /** The count is said aloud only from this share of the limit left, and once typing pauses for ANNOUNCE_DELAY_MS. */
  const NEAR_LIMIT_SHARE = 0.1;
  const ANNOUNCE_DELAY_MS = 1_000;

  /**
   * The live count under a field, "1,234 / 10,000 characters", which the field's aria-describedby
   * names, so it is read with the field. Said aloud only near or over the limit and once typing
   * pauses: at every keystroke it would drown out the typing.
   * @param {HTMLElement} count
   * @param {HTMLElement} live a polite live region
   * @param {number} limit
   */
  function characterCounter(count, live, limit) {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let announcement;
    /** @param {string} value */
    return (value) => {
      const left = limit - characterCount(value);
      const over = left < 0 ? `: ${formatCount(-left)} too many` : '';
      count.textContent = `${formatCount(limit - left)} / ${formatCount(limit)} characters${over}`;
      count.classList.toggle('field__count--over', left < 0);
      clearTimeout(announcement);
      if (left > limit * NEAR_LIMIT_SHARE) {
        live.textContent = '';
        return;
      }
      announcement = setTimeout(() => {
        live.textContent =
          left < 0 ? `${formatCount(-left)} characters too many.` : `${formatCount(left)} character${left === 1 ? '' : 's'} left.`;
      }, ANNOUNCE_DELAY_MS);
    };
  }

  /** Characters as the API's JSON Schema counts them (maxLength): code points, so an emoji is one. @param {string} value */
  function characterCount(value) {
    let count = 0;
    for (const _character of value) count++;
    return count;
  }

  /** @param {number} value */
  function formatCount(value) {
    return value.toLocaleString('en-US');
  }

  window.studioInquiry ??= {};
  window.studioInquiry.counts = { characterCounter, characterCount, formatCount };
})();

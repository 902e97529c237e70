// The inbox's one script (served from this service: the CSP allows scripts from 'self' only). On the
// list's first page it asks every few seconds for inquiries newer than the newest shown, puts them on
// top, and says how many arrived in the polite live region. Without it the list is whole, just not live.
(() => {
  const POLL_MS = 3000;
  const rows = document.getElementById('rows');
  const status = document.getElementById('live-status');
  if (!rows || !status || !rows.dataset.live) return;
  const base = rows.dataset.live;

  const newest = () => rows.querySelector('tr[data-cursor]')?.dataset.cursor ?? '';

  async function poll() {
    const url = `${base}${base.includes('?') ? '&' : '?'}since=${encodeURIComponent(newest())}`;
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
      if (response.status === 401) return false; // signed out elsewhere: the next page asks to sign in
      if (!response.ok) return true;
      const answer = await response.json();
      const fresh = (answer.rows ?? []).filter((row) => !rows.querySelector(`tr[data-cursor="${CSS.escape(row.cursor)}"]`));
      if (fresh.length === 0) return true;
      rows.insertAdjacentHTML('afterbegin', fresh.map((row) => row.html).join(''));
      for (const row of rows.querySelectorAll('tr[data-cursor]'))
        if (fresh.some((f) => f.cursor === row.dataset.cursor)) row.classList.add('row--fresh');
      document.querySelector('.empty')?.remove();
      status.textContent = fresh.length === 1 ? '1 new inquiry' : `${fresh.length} new inquiries`;
    } catch {
      // Offline for a moment: the next poll tries again.
    }
    return true;
  }

  async function loop() {
    if (await poll()) setTimeout(loop, POLL_MS);
  }
  setTimeout(loop, POLL_MS);
})();

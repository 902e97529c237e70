// The inbox's overview (GET /inbox/overview): inquiries per day for the last 90 days by source as a
// server-rendered SVG chart, with its numbers as text and as a table, and the delivery health.
import { SOURCE_NAMES } from '../../inquiries/source.js';
import type { DailyCount } from '../../storage/ports-inbox.js';
import { escapeHtml as e } from '../html.js';
import { type PageContext, renderPage } from './layout.js';

type SourceKey = 'page' | 'api' | 'mcp' | 'unknown';
const SOURCES: readonly SourceKey[] = ['page', 'api', 'mcp', 'unknown'];
const SOURCE_LABELS: Readonly<Record<SourceKey, string>> = { ...SOURCE_NAMES, unknown: 'unknown (before sources were kept)' };
/** The same colours as the legend's swatches (inbox.css): attributes, as the CSP allows no inline style. */
const COLOURS: Readonly<Record<SourceKey, string>> = { page: '#234e52', api: '#c05621', mcp: '#6b46c1', unknown: '#8a8f98' };

const WIDTH = 900;
const HEIGHT = 260;
const PAD = { left: 40, right: 10, top: 10, bottom: 30 };

export interface OverviewData {
  readonly days: readonly string[];
  readonly counts: readonly DailyCount[];
}

function byDay({ days, counts }: OverviewData): Map<string, Record<SourceKey, number>> {
  const table = new Map(days.map((day) => [day, { page: 0, api: 0, mcp: 0, unknown: 0 } as Record<SourceKey, number>]));
  for (const { day, source, count } of counts) {
    const row = table.get(day);
    if (row) row[source ?? 'unknown'] += count;
  }
  return table;
}

function chart(table: Map<string, Record<SourceKey, number>>, summary: string): string {
  const days = [...table.keys()];
  const totals = days.map((day) => SOURCES.reduce((sum, source) => sum + (table.get(day)?.[source] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / days.length;
  const y = (value: number) => PAD.top + plotHeight - (value / max) * plotHeight;
  const bars = days.flatMap((day, i) => {
    let base = 0;
    return SOURCES.flatMap((source) => {
      const value = table.get(day)?.[source] ?? 0;
      if (value === 0) return [];
      const top = y(base + value);
      const height = y(base) - top;
      base += value;
      return [
        `<rect x="${(PAD.left + i * step + 1).toFixed(1)}" y="${top.toFixed(1)}" width="${Math.max(1, step - 2).toFixed(1)}" height="${height.toFixed(1)}" fill="${COLOURS[source]}"/>`,
      ];
    });
  });
  const ticks = [0, Math.round(max / 2), max]
    .filter((value, i, all) => all.indexOf(value) === i)
    .map(
      (value) =>
        `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(value)}" y2="${y(value)}" stroke="#dcd8ce"/><text x="${PAD.left - 6}" y="${y(value) + 4}" text-anchor="end" font-size="12" fill="#555b64">${value}</text>`,
    );
  const labels = days
    .map((day, i) =>
      i % 15 === 0 || i === days.length - 1
        ? `<text x="${PAD.left + i * step + step / 2}" y="${HEIGHT - 8}" text-anchor="middle" font-size="12" fill="#555b64">${day.slice(5)}</text>`
        : '',
    )
    .join('');
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" focusable="false">
<title id="chart-title">Inquiries per day, last ${days.length} days, by source</title>
<desc id="chart-desc">${e(summary)}</desc>
${ticks.join('')}${bars.join('')}${labels}
</svg>`;
}

export function overviewPage(context: PageContext, data: OverviewData, health: string, banner = ''): string {
  const table = byDay(data);
  const totals = Object.fromEntries(
    SOURCES.map((source) => [source, [...table.values()].reduce((sum, row) => sum + row[source], 0)]),
  ) as Record<SourceKey, number>;
  const all = SOURCES.reduce((sum, source) => sum + totals[source], 0);
  const first = data.days[0] ?? '';
  const last = data.days.at(-1) ?? '';
  const summary = `${all} inquiries from ${first} to ${last} (UTC): ${SOURCES.map((source) => `${totals[source]} through ${SOURCE_LABELS[source]}`).join(', ')}.`;
  const rows = [...table]
    .reverse()
    .filter(([, row]) => SOURCES.some((source) => row[source] > 0))
    .map(
      ([day, row]) =>
        `<tr><th scope="row">${day}</th>${SOURCES.map((source) => `<td>${row[source]}</td>`).join('')}<td>${SOURCES.reduce((sum, source) => sum + row[source], 0)}</td></tr>`,
    )
    .join('');
  const body = `<h1>Overview</h1>
<h2 id="per-day">Inquiries per day</h2>
<p>${e(summary)}</p>
${chart(table, summary)}
<ul class="legend" aria-label="Sources">${SOURCES.map((source) => `<li><span class="swatch swatch--${source}" aria-hidden="true"></span>${e(SOURCE_LABELS[source])}: ${totals[source]}</li>`).join('')}</ul>
<details>
<summary>The numbers, day by day</summary>
${
  rows === ''
    ? '<p>No inquiries in these days.</p>'
    : `<div class="table-scroll" role="region" aria-labelledby="numbers-caption" tabindex="0"><table>
<caption id="numbers-caption">Inquiries per day (days with none left out), newest first</caption>
<thead><tr><th scope="col">Day (UTC)</th>${SOURCES.map((source) => `<th scope="col">${e(SOURCE_LABELS[source])}</th>`).join('')}<th scope="col">All</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
</details>
<h2 id="health">Delivery health</h2>
${health}`;
  return renderPage(context, { title: 'Overview', body, current: 'overview', banner });
}

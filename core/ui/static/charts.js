// The dashboard's charts, drawn as SVG at their real pixel width (not a scaled viewBox), so labels keep
// a readable size from a phone to a wide monitor: spend by day stacked by model, and per provider the
// latency and the error rate over time.
import { dayKey, fmtInt, fmtMs, fmtPct, fmtUsd, h, useWidth } from './lib.js';

const PALETTE = ['#3d5afe', '#00a389', '#f28c28', '#c2185b', '#7b61ff', '#2e7d32', '#8d6e63', '#0097a7'];
const OTHER = '#9098ab';
export const MAX_SERIES = PALETTE.length;

function daysFrom(since, rows) {
  const first = since !== null ? new Date(since) : rows.length > 0 ? new Date(`${rows[0].day}T00:00:00`) : new Date();
  const days = [];
  const end = dayKey(new Date());
  for (let d = new Date(first.getFullYear(), first.getMonth(), first.getDate()); days.length < 400; d.setDate(d.getDate() + 1)) {
    const k = dayKey(d);
    days.push(k);
    if (k >= end) break;
  }
  return days;
}

/** The top models by spend get a colour each; the rest share one "other" band. */
function seriesOf(rows) {
  const total = new Map();
  for (const r of rows) total.set(r.model, (total.get(r.model) ?? 0) + r.cost_usd);
  const ranked = [...total.entries()].filter(([, c]) => c > 0).sort((a, b) => b[1] - a[1]).map(([m]) => m);
  const named = ranked.slice(0, MAX_SERIES - 1);
  const colour = new Map(named.map((m, i) => [m, PALETTE[i]]));
  return { named, colour, hasOther: ranked.length > named.length };
}

export function StackedDayChart({ rows, since }) {
  const [ref, width] = useWidth();
  const days = daysFrom(since, rows);
  const { named, colour, hasOther } = seriesOf(rows);
  const byDay = new Map();
  for (const r of rows) {
    const list = byDay.get(r.day) ?? [];
    list.push(r);
    byDay.set(r.day, list);
  }
  const dayTotal = (k) => (byDay.get(k) ?? []).reduce((a, r) => a + r.cost_usd, 0);
  const max = Math.max(0, ...days.map(dayTotal));
  const H = width < 500 ? 170 : 200;
  const top = 18;
  const bottom = 24;
  const left = 4;
  const slot = (width - left * 2) / days.length;
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  // One date label per ~56 px: never overlapping, whatever the width.
  const labelEvery = Math.max(1, Math.ceil(56 / slot));
  return h(
    'div',
    { ref, className: 'chart-box' },
    h(
      'svg',
      { className: 'chart', width, height: H, viewBox: `0 0 ${width} ${H}`, role: 'img', 'aria-label': 'Spend by day, stacked by model', 'data-testid': 'day-chart' },
      h('line', { x1: left, x2: width - left, y1: H - bottom + 0.5, y2: H - bottom + 0.5, className: 'axis' }),
      h('text', { x: left, y: 12, className: 'axis-label' }, `max ${fmtUsd(max)} a day`),
      days.map((k, i) => {
        const list = (byDay.get(k) ?? []).slice().sort((a, b) => b.cost_usd - a.cost_usd);
        const total = dayTotal(k);
        const requests = list.reduce((a, r) => a + r.requests, 0);
        const x = left + i * slot + (slot - barW) / 2;
        const full = max > 0 ? ((H - top - bottom) * total) / max : 0;
        let y = H - bottom;
        const segs = [];
        for (const r of list) {
          if (r.cost_usd <= 0 || max === 0) continue;
          const sh = ((H - top - bottom) * r.cost_usd) / max;
          y -= sh;
          segs.push(h('rect', { key: r.model, x, y, width: barW, height: Math.max(sh, 0.5), className: 'seg', fill: colour.get(r.model) ?? OTHER, 'data-model': r.model }));
        }
        return h(
          'g',
          { key: k },
          segs,
          // The day's whole bar, on top: carries the tooltip and the day for tests and screen readers.
          h('rect', { x, y: H - bottom - full, width: barW, height: Math.max(full, total > 0 ? 1 : 0), className: 'bar', 'data-day': k }, h('title', null, `${k}: ${fmtUsd(total)}, ${fmtInt(requests)} requests\n${list.filter((r) => r.cost_usd > 0).map((r) => `${r.model}: ${fmtUsd(r.cost_usd)}`).join('\n')}`)),
          (i % labelEvery === 0 && days.length - 1 - i >= labelEvery * 0.8) || i === days.length - 1 ? h('text', { x: x + barW / 2, y: H - 7, className: 'axis-label', textAnchor: i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle' }, k.slice(5)) : null,
        );
      }),
    ),
    named.length > 0
      ? h(
          'ul',
          { className: 'legend', 'data-testid': 'chart-legend' },
          named.map((m) => h('li', { key: m }, h('span', { className: 'swatch', style: { background: colour.get(m) } }), m)),
          hasOther ? h('li', { key: '(other)' }, h('span', { className: 'swatch', style: { background: OTHER } }), 'other models') : null,
        )
      : null,
  );
}

/** One provider's latency (line, average of successful attempts) and error rate (bars) per time slice. */
function ProviderChart({ stats, width }) {
  const H = 124;
  const top = 20;
  const bottom = 18;
  const n = stats.buckets.length;
  const slot = (width - 8) / n;
  const maxMs = Math.max(1, ...stats.buckets.map((b) => b.avg_ms ?? 0));
  const plotH = H - top - bottom;
  const points = stats.buckets
    .map((b, i) => (b.avg_ms === null ? null : `${(4 + i * slot + slot / 2).toFixed(1)},${(top + plotH - (plotH * b.avg_ms) / maxMs).toFixed(1)}`))
    .filter(Boolean);
  const fmtClock = (t) => {
    const d = new Date(t);
    return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  };
  return h(
    'svg',
    { className: 'chart', width, height: H, viewBox: `0 0 ${width} ${H}`, role: 'img', 'aria-label': `${stats.provider}: latency and error rate`, 'data-testid': 'provider-chart', 'data-provider': stats.provider },
    h('line', { x1: 4, x2: width - 4, y1: H - bottom + 0.5, y2: H - bottom + 0.5, className: 'axis' }),
    stats.buckets.map((b, i) =>
      b.attempts > 0 && b.errors > 0
        ? h('rect', { key: `e${i}`, x: 4 + i * slot + slot * 0.15, width: slot * 0.7, y: top + plotH - (plotH * b.errors) / b.attempts, height: (plotH * b.errors) / b.attempts, className: 'err-bar' }, h('title', null, `${fmtClock(b.start)}: ${b.errors} of ${b.attempts} attempts failed`))
        : null,
    ),
    points.length > 1 ? h('polyline', { points: points.join(' '), className: 'lat-line' }) : null,
    stats.buckets.map((b, i) =>
      b.avg_ms === null ? null : h('circle', { key: `p${i}`, cx: 4 + i * slot + slot / 2, cy: top + plotH - (plotH * b.avg_ms) / maxMs, r: 2.5, className: 'lat-dot' }, h('title', null, `${fmtClock(b.start)}: ${fmtMs(b.avg_ms)} average, p95 ${fmtMs(b.p95_ms)}, ${b.attempts} attempts`)),
    ),
    h('text', { x: 4, y: H - 4, className: 'axis-label' }, fmtClock(stats.buckets[0]?.start ?? Date.now())),
    h('text', { x: width - 4, y: H - 4, className: 'axis-label', textAnchor: 'end' }, 'now'),
    // Above the plot, so no data point ever sits under it.
    h('text', { x: 4, y: 12, className: 'axis-label' }, `latency, max ${fmtMs(maxMs)}`),
  );
}

export function ProviderCharts({ stats }) {
  const [ref, width] = useWidth();
  const cols = width >= 900 ? 3 : width >= 560 ? 2 : 1;
  const cellW = Math.floor((width - (cols - 1) * 16) / cols);
  return h(
    'div',
    { ref, className: 'provider-charts', 'data-testid': 'provider-charts' },
    stats.length === 0
      ? h('p', { className: 'muted' }, 'No attempts in the last 24 hours.')
      : stats.map((s) =>
          h(
            'figure',
            { key: s.provider, style: { width: `${cellW}px` } },
            h(
              'figcaption',
              null,
              h('strong', null, s.provider),
              h('span', { className: 'muted small', 'data-testid': 'provider-stats' }, ` ${fmtInt(s.attempts)} attempts · avg ${fmtMs(s.avg_ms)} · p95 ${fmtMs(s.p95_ms)} · errors ${fmtPct(s.error_rate)}`),
            ),
            h(ProviderChart, { stats: s, width: cellW }),
          ),
        ),
    stats.length > 0 ? h('p', { className: 'muted small legend-line' }, h('span', { className: 'swatch line' }), ' average latency   ', h('span', { className: 'swatch err' }), ' share of attempts that failed') : null,
  );
}

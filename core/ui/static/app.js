// The gateway dashboard: spend by day, key and model; the call log (live) with request detail; keys;
// providers. Plain ES module, React without JSX (no build step). It talks only to the admin API, same
// origin, with `Authorization: Bearer <admin token>`. The token is never in a URL or in a served page:
// in a browser the user types it once and it stays in this tab's sessionStorage. In the Electron window
// the app adds the header to the page's `/admin/` requests itself (desktop/src/dashboard-auth.ts): the
// page notices that an admin call without a token of its own succeeds and never asks for one.
import { React, ReactDOMClient } from '/ui/vendor/react.js';

const { createElement: h, Fragment, useCallback, useEffect, useMemo, useRef, useState } = React;

const TOKEN_KEY = 'gateway.adminToken';
const MAX_CALLS = 2000;

// ---------------------------------------------------------------------------------------------------
// Formatting

function fmtUsd(v) {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '$0.00';
  const a = Math.abs(v);
  return '$' + (a >= 1 ? v.toFixed(2) : a >= 0.01 ? v.toFixed(4) : v.toFixed(6));
}
const fmtInt = (v) => (v === null || v === undefined ? '—' : Math.round(v).toLocaleString('en-US'));
const fmtMs = (v) => (v === null || v === undefined ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const pad = (n) => String(n).padStart(2, '0');
const dayKey = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

function fmtTime(iso) {
  const d = new Date(iso);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return dayKey(d) === dayKey(new Date()) ? time : `${dayKey(d)} ${time}`;
}

function prettyBody(text) {
  if (text === null || text === undefined || text === '') return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------------
// The admin API

class AuthError extends Error {}

/** `token` null: send no Authorization of our own (the Electron window adds it). */
const authHeader = (token) => (token === null ? {} : { authorization: `Bearer ${token}` });

async function adminFetch(token, path, init = {}) {
  const res = await fetch(path, {
    ...init,
    cache: 'no-store',
    headers: { ...(init.headers ?? {}), accept: 'application/json', ...authHeader(token) },
  });
  const text = await res.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (res.status === 401) throw new AuthError(body?.error?.message ?? 'The admin token was refused.');
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  return body;
}

function makeApi(token, onUnauthorized) {
  const call = async (path, init) => {
    try {
      return await adminFetch(token, path, init);
    } catch (err) {
      if (err instanceof AuthError) onUnauthorized();
      throw err;
    }
  };
  return {
    get: (path) => call(path),
    post: (path, json) => call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }),
  };
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

/**
 * Follows `/admin/events` (server-sent events). EventSource cannot send an Authorization header, so
 * this reads the stream with fetch and parses the events itself; it reconnects with a backoff.
 */
async function followEvents(token, signal, onEvent, onState) {
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const res = await fetch('/admin/events', { headers: { accept: 'text/event-stream', ...authHeader(token) }, cache: 'no-store', signal });
      if (res.status === 401) {
        onState('unauthorized');
        return;
      }
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      onState('live');
      delay = 1000;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, '\n');
        let end;
        while ((end = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let event = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line === '' || line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            let v = colon === -1 ? '' : line.slice(colon + 1);
            if (v.startsWith(' ')) v = v.slice(1);
            if (field === 'event') event = v;
            else if (field === 'data') data.push(v);
          }
          if (data.length > 0) onEvent(event, data.join('\n'));
        }
      }
    } catch {
      /* network error or abort: retried below unless aborted */
    }
    if (signal.aborted) return;
    onState('reconnecting');
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 15_000);
  }
}

/** Newest first, one row per id, bounded. */
function mergeCalls(a, b) {
  const seen = new Set();
  const out = [];
  for (const c of [...a, ...b]) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    out.push(c);
  }
  out.sort((x, y) => Date.parse(y.time) - Date.parse(x.time));
  return out.length > MAX_CALLS ? out.slice(0, MAX_CALLS) : out;
}

// ---------------------------------------------------------------------------------------------------
// Routing (the hash holds the view, never a secret)

function parseHash() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  const view = ['spend', 'logs', 'keys', 'providers'].includes(parts[0]) ? parts[0] : 'spend';
  const id = view === 'logs' && parts[1] ? decodeURIComponent(parts.slice(1).join('/')) : null;
  return { view, id };
}

function useHashRoute() {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

// ---------------------------------------------------------------------------------------------------
// Small pieces

function ErrorBanner({ message }) {
  return message ? h('div', { className: 'banner error', role: 'alert' }, message) : null;
}

function StatusBadge({ status }) {
  const cls = status < 400 ? 'ok' : status === 499 ? 'warn' : 'bad';
  return h('span', { className: `badge ${cls}` }, String(status));
}

function Table({ columns, rows, rowKey, onRowClick, empty, testId, rowTestId, foot }) {
  return h(
    'table',
    { className: onRowClick ? 'clickable' : undefined, 'data-testid': testId },
    h('thead', null, h('tr', null, columns.map((c) => h('th', { key: c.label, className: c.num ? 'num' : undefined }, c.label)))),
    h(
      'tbody',
      null,
      rows.length === 0
        ? h('tr', null, h('td', { colSpan: columns.length, className: 'empty' }, empty ?? 'Nothing yet.'))
        : rows.map((r) =>
            h(
              'tr',
              {
                key: rowKey(r),
                'data-testid': rowTestId,
                'data-id': rowKey(r),
                onClick: onRowClick ? () => onRowClick(r) : undefined,
                tabIndex: onRowClick ? 0 : undefined,
                onKeyDown: onRowClick ? (e) => (e.key === 'Enter' ? onRowClick(r) : undefined) : undefined,
              },
              columns.map((c) => h('td', { key: c.label, className: c.num ? 'num' : undefined }, c.cell(r))),
            ),
          ),
    ),
    foot ? h('tfoot', null, h('tr', null, columns.map((c) => h('td', { key: c.label, className: c.num ? 'num' : undefined }, foot[c.label] ?? '')))) : null,
  );
}

// ---------------------------------------------------------------------------------------------------
// Sign-in

function LoginForm({ notice, onToken }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const token = value.trim();
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      await adminFetch(token, '/admin/snapshot?recent=1');
      onToken(token);
    } catch (err) {
      setError(err instanceof AuthError ? 'That is not the admin token of this gateway.' : `Could not reach the gateway: ${err.message}`);
      setBusy(false);
    }
  };
  return h(
    'main',
    { className: 'login' },
    h(
      'form',
      { onSubmit: submit, 'data-testid': 'login-form' },
      h('h1', null, 'Gateway dashboard'),
      h('p', null, 'Enter the admin token of this gateway. It is the file ', h('code', null, 'admin-token'), ' in the data home:'),
      h('pre', { className: 'hint' }, 'cat "${GATEWAY_HOME:-$HOME/.local/share/gateway}/admin-token"'),
      h('p', { className: 'muted' }, 'macOS: ~/Library/Application Support/gateway; Windows: %APPDATA%\\gateway. The token stays in this tab only (sessionStorage).'),
      h('label', { htmlFor: 'token' }, 'Admin token'),
      h('input', { id: 'token', name: 'token', type: 'password', autoComplete: 'off', spellCheck: false, autoFocus: true, value, onChange: (e) => setValue(e.target.value) }),
      h('button', { type: 'submit', disabled: busy || value.trim() === '' }, busy ? 'Checking…' : 'Open dashboard'),
      h(ErrorBanner, { message: error }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------
// Spend

const RANGES = [
  { id: '7d', label: '7 days' },
  { id: '30d', label: '30 days' },
  { id: 'month', label: 'This month' },
  { id: 'all', label: 'All time' },
];

function rangeStart(id) {
  const now = new Date();
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  if (id === '7d') return new Date(today.getFullYear(), today.getMonth(), today.getDate() - 6).getTime();
  if (id === '30d') return new Date(today.getFullYear(), today.getMonth(), today.getDate() - 29).getTime();
  if (id === 'month') return new Date(now.getFullYear(), now.getMonth(), 1).getTime();
  return null;
}

function DayChart({ rows, since }) {
  const byDay = new Map(rows.map((r) => [r.group, r]));
  const first = since !== null ? new Date(since) : rows.length > 0 ? new Date(`${rows[0].group}T00:00:00`) : new Date();
  const days = [];
  const end = dayKey(new Date());
  for (let d = new Date(first.getFullYear(), first.getMonth(), first.getDate()); days.length < 400; d.setDate(d.getDate() + 1)) {
    const k = dayKey(d);
    days.push(k);
    if (k >= end) break;
  }
  const max = Math.max(0, ...days.map((k) => byDay.get(k)?.cost_usd ?? 0));
  const W = 760;
  const H = 180;
  const top = 16;
  const bottom = 24;
  const left = 8;
  const slot = (W - left * 2) / days.length;
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const labelEvery = Math.ceil(days.length / 10);
  return h(
    'svg',
    { className: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Spend by day', 'data-testid': 'day-chart' },
    h('line', { x1: left, x2: W - left, y1: H - bottom + 0.5, y2: H - bottom + 0.5, className: 'axis' }),
    h('text', { x: left, y: 11, className: 'axis-label' }, `max ${fmtUsd(max)}`),
    days.map((k, i) => {
      const row = byDay.get(k);
      const cost = row?.cost_usd ?? 0;
      const bh = max > 0 ? ((H - top - bottom) * cost) / max : 0;
      const x = left + i * slot + (slot - barW) / 2;
      return h(
        'g',
        { key: k },
        h('rect', { x, y: H - bottom - bh, width: barW, height: Math.max(bh, cost > 0 ? 1 : 0), className: 'bar', 'data-day': k }, h('title', null, `${k}: ${fmtUsd(cost)}, ${fmtInt(row?.requests ?? 0)} requests`)),
        i % labelEvery === 0 || i === days.length - 1 ? h('text', { x: x + barW / 2, y: H - 8, className: 'axis-label', textAnchor: 'middle' }, k.slice(5)) : null,
      );
    }),
  );
}

function usageColumns(label) {
  return [
    { label, cell: (r) => h('span', { className: 'nowrap' }, r.group) },
    { label: 'Requests', num: true, cell: (r) => fmtInt(r.requests) },
    { label: 'Errors', num: true, cell: (r) => fmtInt(r.errors) },
    { label: 'Input tokens', num: true, cell: (r) => fmtInt(r.input_tokens) },
    { label: 'Output tokens', num: true, cell: (r) => fmtInt(r.output_tokens) },
    { label: 'Cost', num: true, cell: (r) => fmtUsd(r.cost_usd) },
  ];
}

function totals(rows, label) {
  const sum = (f) => rows.reduce((a, r) => a + (r[f] ?? 0), 0);
  return { [label]: 'Total', Requests: fmtInt(sum('requests')), Errors: fmtInt(sum('errors')), 'Input tokens': fmtInt(sum('input_tokens')), 'Output tokens': fmtInt(sum('output_tokens')), Cost: fmtUsd(sum('cost_usd')) };
}

function SpendView({ api, tick }) {
  const [range, setRange] = useState('30d');
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const since = rangeStart(range);
  useEffect(() => {
    let stale = false;
    const q = since !== null ? `&since=${since}` : '';
    Promise.all(['day', 'key', 'model'].map((by) => api.get(`/admin/usage?by=${by}${q}`)))
      .then(([day, key, model]) => {
        if (stale) return;
        setData({ day: day.rows, key: key.rows, model: model.rows });
        setError(null);
      })
      .catch((err) => !stale && setError(err.message));
    return () => {
      stale = true;
    };
  }, [api, range, tick]);
  return h(
    'section',
    { 'data-testid': 'spend-view' },
    h(
      'div',
      { className: 'toolbar' },
      h('h2', null, 'Spend'),
      h('div', { className: 'segmented', role: 'group', 'aria-label': 'Range' }, RANGES.map((r) => h('button', { key: r.id, type: 'button', className: r.id === range ? 'on' : undefined, 'aria-pressed': r.id === range, onClick: () => setRange(r.id) }, r.label))),
    ),
    h(ErrorBanner, { message: error }),
    data === null
      ? h('p', { className: 'muted' }, 'Loading…')
      : h(
          Fragment,
          null,
          h('div', { className: 'card' }, h('h3', null, 'By day'), h(DayChart, { rows: data.day, since })),
          h(
            'div',
            { className: 'grid2' },
            h('div', { className: 'card' }, h('h3', null, 'By key'), h(Table, { columns: usageColumns('Key'), rows: data.key, rowKey: (r) => r.group, testId: 'usage-by-key', foot: data.key.length > 0 ? totals(data.key, 'Key') : null, empty: 'No calls in this range.' })),
            h('div', { className: 'card' }, h('h3', null, 'By model'), h(Table, { columns: usageColumns('Model'), rows: data.model, rowKey: (r) => r.group, testId: 'usage-by-model', foot: data.model.length > 0 ? totals(data.model, 'Model') : null, empty: 'No calls in this range.' })),
          ),
        ),
  );
}

// ---------------------------------------------------------------------------------------------------
// Logs

const LOG_COLUMNS = [
  { label: 'Time', cell: (c) => h('a', { href: `#/logs/${encodeURIComponent(c.id)}`, onClick: (e) => e.stopPropagation() }, fmtTime(c.time)) },
  { label: 'Key', cell: (c) => c.key ?? '—' },
  { label: 'Endpoint', cell: (c) => h(Fragment, null, c.endpoint, c.stream ? h('span', { className: 'tag' }, 'stream') : null) },
  { label: 'Model', cell: (c) => c.model ?? c.model_requested ?? '—' },
  { label: 'Provider', cell: (c) => c.provider ?? '—' },
  { label: 'Status', cell: (c) => h(Fragment, null, h(StatusBadge, { status: c.status }), c.error_type ? h('span', { className: 'muted small' }, ` ${c.error_type}`) : null) },
  { label: 'Tokens in/out', num: true, cell: (c) => `${fmtInt(c.input_tokens)} / ${fmtInt(c.output_tokens)}` },
  { label: 'Cost', num: true, cell: (c) => (c.pricing === 'unpriced' ? 'unpriced' : fmtUsd(c.cost_usd) + (c.pricing === 'estimated' ? ' ~' : '')) },
  { label: 'Latency', num: true, cell: (c) => fmtMs(c.latency_ms) },
];

function LogsView({ calls, onMore, more, live }) {
  const [filter, setFilter] = useState('');
  const f = filter.trim().toLowerCase();
  const rows = f === '' ? calls : calls.filter((c) => [c.key, c.model, c.model_requested, c.provider, c.endpoint, String(c.status), c.error_type, c.id].some((v) => v && String(v).toLowerCase().includes(f)));
  return h(
    'section',
    { 'data-testid': 'logs-view' },
    h(
      'div',
      { className: 'toolbar' },
      h('h2', null, 'Requests'),
      h('span', { className: `live is-${live}` }, live === 'live' ? 'live' : live === 'connecting' ? 'connecting…' : 'reconnecting…'),
      h('input', { type: 'search', placeholder: 'Filter by key, model, provider, status…', value: filter, onChange: (e) => setFilter(e.target.value), 'aria-label': 'Filter' }),
    ),
    h('div', { className: 'card flush' }, h(Table, { columns: LOG_COLUMNS, rows, rowKey: (c) => c.id, onRowClick: (c) => (location.hash = `#/logs/${encodeURIComponent(c.id)}`), testId: 'logs-table', rowTestId: 'log-row', empty: 'No requests yet. Point a client at the base URL and make a call.' })),
    more && calls.length > 0 ? h('button', { type: 'button', className: 'secondary', onClick: onMore }, 'Load older') : null,
  );
}

function Field({ label, children }) {
  return h(Fragment, null, h('dt', null, label), h('dd', null, children));
}

function Body({ title, text, testId }) {
  const pretty = useMemo(() => prettyBody(text), [text]);
  return h('div', { className: 'card' }, h('h3', null, title), pretty === null ? h('p', { className: 'muted' }, 'Not recorded.') : h('pre', { className: 'body', 'data-testid': testId }, pretty));
}

function LogDetail({ api, id }) {
  const [call, setCall] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stale = false;
    setCall(null);
    setError(null);
    api.get(`/admin/logs/${encodeURIComponent(id)}`).then((c) => !stale && setCall(c), (err) => !stale && setError(err.message));
    return () => {
      stale = true;
    };
  }, [api, id]);
  return h(
    'section',
    { 'data-testid': 'log-detail' },
    h('div', { className: 'toolbar' }, h('a', { href: '#/logs', className: 'back' }, '← Requests'), h('h2', null, 'Request ', h('code', null, id))),
    h(ErrorBanner, { message: error }),
    call === null
      ? error
        ? null
        : h('p', { className: 'muted' }, 'Loading…')
      : h(
          Fragment,
          null,
          h(
            'div',
            { className: 'card' },
            h(
              'dl',
              { className: 'fields' },
              h(Field, { label: 'Time' }, new Date(call.time).toLocaleString()),
              h(Field, { label: 'Key' }, call.key ?? '—'),
              h(Field, { label: 'Endpoint' }, `${call.endpoint}${call.stream ? ' (stream)' : ''}`),
              h(Field, { label: 'Model' }, call.model_requested && call.model && call.model_requested !== call.model ? `${call.model_requested} → ${call.model}` : (call.model ?? call.model_requested ?? '—')),
              h(Field, { label: 'Provider' }, call.provider ?? '—'),
              h(Field, { label: 'Status' }, h(StatusBadge, { status: call.status }), call.error_type ? ` ${call.error_type}` : ''),
              call.error_message ? h(Field, { label: 'Error' }, call.error_message) : null,
              h(Field, { label: 'Tokens' }, `${fmtInt(call.input_tokens)} in, ${fmtInt(call.output_tokens)} out` + (call.cached_tokens ? `, ${fmtInt(call.cached_tokens)} cached` : '') + (call.reasoning_tokens ? `, ${fmtInt(call.reasoning_tokens)} reasoning` : '')),
              h(Field, { label: 'Cost' }, `${fmtUsd(call.cost_usd)} (${call.pricing}${call.price_version ? `, prices ${call.price_version}` : ''})`),
              h(Field, { label: 'Latency' }, fmtMs(call.latency_ms) + (call.ttft_ms !== null ? `, first token ${fmtMs(call.ttft_ms)}` : '')),
            ),
          ),
          h(
            'div',
            { className: 'card' },
            h('h3', null, `Attempts (${call.attempt_list.length})`),
            h(Table, {
              columns: [
                { label: '#', num: true, cell: (a) => a.n },
                { label: 'Provider', cell: (a) => a.provider },
                { label: 'Model', cell: (a) => a.model },
                { label: 'Status', cell: (a) => (a.status === null ? '—' : h(StatusBadge, { status: a.status })) },
                { label: 'Error', cell: (a) => a.error ?? '' },
                { label: 'Duration', num: true, cell: (a) => fmtMs(a.duration_ms) },
              ],
              rows: call.attempt_list.map((a, i) => ({ ...a, n: i + 1 })),
              rowKey: (a) => String(a.n),
              testId: 'attempts-table',
              empty: 'The call reached no provider.',
            }),
          ),
          h('div', { className: 'grid2' }, h(Body, { title: 'Request body', text: call.request_body, testId: 'request-body' }), h(Body, { title: 'Response body', text: call.response_body, testId: 'response-body' })),
        ),
  );
}

// ---------------------------------------------------------------------------------------------------
// Keys

function BudgetBar({ k }) {
  if (k.budget_usd === null) return h('span', { className: 'muted' }, `no budget (${fmtUsd(k.spent_usd)} today)`);
  const ratio = k.budget_usd > 0 ? Math.min(1, k.spent_usd / k.budget_usd) : 1;
  const level = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
  return h(
    'div',
    { className: 'budget', title: `${fmtUsd(k.spent_usd)} of ${fmtUsd(k.budget_usd)} (${k.budget_period})` },
    h('div', { className: 'track' }, h('div', { className: `fill ${level}`, style: { width: `${(ratio * 100).toFixed(1)}%` } })),
    h('span', { className: 'small' }, `${fmtUsd(k.spent_usd)} / ${fmtUsd(k.budget_usd)} ${k.budget_period}`),
  );
}

const numOrNull = (s) => (s.trim() === '' ? null : Number(s));

function CreateKeyForm({ api, onCreated }) {
  const [form, setForm] = useState({ name: '', budget: '', period: 'monthly', rpm: '', tpm: '', models: '' });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const budget = numOrNull(form.budget);
    const body = {
      name: form.name.trim(),
      budget_usd: budget,
      budget_period: budget !== null ? form.period : null,
      rpm: numOrNull(form.rpm),
      tpm: numOrNull(form.tpm),
      models: form.models.trim() === '' ? null : form.models.split(',').map((m) => m.trim()).filter(Boolean),
    };
    for (const f of ['budget_usd', 'rpm', 'tpm']) {
      if (body[f] !== null && !(Number.isFinite(body[f]) && body[f] > 0)) return setError(`${f} must be a positive number.`);
    }
    setBusy(true);
    try {
      const created = await api.post('/admin/keys', body);
      setForm({ name: '', budget: '', period: 'monthly', rpm: '', tpm: '', models: '' });
      onCreated(created);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  const input = (field, label, props = {}) => h('label', null, h('span', null, label), h('input', { name: field, value: form[field], onChange: set(field), ...props }));
  return h(
    'form',
    { className: 'card create-key', onSubmit: submit, 'data-testid': 'create-key-form' },
    h('h3', null, 'Create a key'),
    h(
      'div',
      { className: 'form-row' },
      input('name', 'Name', { required: true, maxLength: 64, placeholder: 'my-tool', autoComplete: 'off' }),
      input('budget', 'Budget (USD)', { inputMode: 'decimal', placeholder: 'none' }),
      h('label', null, h('span', null, 'Period'), h('select', { name: 'period', value: form.period, onChange: set('period') }, ['daily', 'monthly', 'total'].map((p) => h('option', { key: p, value: p }, p)))),
      input('rpm', 'RPM', { inputMode: 'numeric', placeholder: '—' }),
      input('tpm', 'TPM', { inputMode: 'numeric', placeholder: '—' }),
      input('models', 'Models (comma-separated)', { placeholder: 'any' }),
      h('button', { type: 'submit', disabled: busy || form.name.trim() === '' }, busy ? 'Creating…' : 'Create key'),
    ),
    h(ErrorBanner, { message: error }),
  );
}

function NewSecret({ created, onDone }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return h(
    'div',
    { className: 'card secret', role: 'status', 'data-testid': 'new-key' },
    h('h3', null, `Key "${created.name}" created`),
    h('p', null, 'Copy it now: it is shown once and the gateway keeps only its hash.'),
    h('div', { className: 'secret-row' }, h('code', { 'data-testid': 'new-key-secret' }, created.key), h('button', { type: 'button', className: 'secondary', onClick: copy }, copied ? 'Copied' : 'Copy'), h('button', { type: 'button', onClick: onDone }, 'Done')),
  );
}

function KeysView({ api, keys, refresh }) {
  const [created, setCreated] = useState(null);
  return h(
    'section',
    { 'data-testid': 'keys-view' },
    h('div', { className: 'toolbar' }, h('h2', null, 'Keys')),
    created ? h(NewSecret, { created, onDone: () => setCreated(null) }) : null,
    h(
      'div',
      { className: 'card flush' },
      h(Table, {
        columns: [
          { label: 'Name', cell: (k) => h('strong', null, k.name) },
          { label: 'Key', cell: (k) => h('code', null, `${k.prefix}…`) },
          { label: 'State', cell: (k) => h('span', { className: `badge ${k.state === 'active' ? 'ok' : k.state === 'disabled' ? 'warn' : 'muted'}` }, k.state) },
          { label: 'Spend / budget', cell: (k) => h(BudgetBar, { k }) },
          { label: 'Limits', cell: (k) => [k.rpm ? `${fmtInt(k.rpm)} rpm` : null, k.tpm ? `${fmtInt(k.tpm)} tpm` : null].filter(Boolean).join(', ') || '—' },
          { label: 'Models', cell: (k) => (k.models && k.models.length > 0 ? k.models.join(', ') : 'any') },
        ],
        rows: keys.filter((k) => k.state !== 'deleted'),
        rowKey: (k) => k.name,
        testId: 'keys-table',
        rowTestId: 'key-row',
        empty: 'No keys yet.',
      }),
    ),
    h(CreateKeyForm, {
      api,
      onCreated: (c) => {
        setCreated(c);
        refresh();
      },
    }),
  );
}

// ---------------------------------------------------------------------------------------------------
// Providers

function Health({ p }) {
  if (p.health === 'open') return h('span', { className: 'badge bad', title: p.next_probe_at ? `next probe ${new Date(p.next_probe_at).toLocaleTimeString()}` : undefined }, 'down');
  if (p.health === 'half-open' || p.health === 'half_open') return h('span', { className: 'badge warn' }, 'probing');
  return h('span', { className: 'badge ok' }, 'healthy');
}

function ProvidersView({ providers }) {
  return h(
    'section',
    { 'data-testid': 'providers-view' },
    h('div', { className: 'toolbar' }, h('h2', null, 'Providers')),
    h(
      'div',
      { className: 'card flush' },
      h(Table, {
        columns: [
          { label: 'Name', cell: (p) => h('strong', null, p.name) },
          { label: 'Type', cell: (p) => (p.preset ? `${p.type} (${p.preset})` : p.type) },
          { label: 'Base URL', cell: (p) => h('code', { className: 'small' }, p.base_url) },
          { label: 'Priority', num: true, cell: (p) => p.priority },
          { label: 'Health', cell: (p) => h(Fragment, null, h(Health, { p }), p.consecutive_failures > 0 ? h('span', { className: 'muted small' }, ` ${p.consecutive_failures} failures`) : null) },
          { label: 'Models', cell: (p) => h('details', null, h('summary', null, `${p.models.length} models`), h('ul', { className: 'models' }, p.models.map((m) => h('li', { key: m }, m)))) },
          { label: 'Today', num: true, cell: (p) => fmtUsd(p.spent_today_usd) },
          { label: 'This month', num: true, cell: (p) => fmtUsd(p.spent_month_usd) },
        ],
        rows: providers,
        rowKey: (p) => p.name,
        testId: 'providers-table',
        rowTestId: 'provider-row',
        empty: 'No provider yet: `gateway providers add NAME --type openai --key-env OPENAI_API_KEY`.',
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------
// The shell

const TABS = [
  { id: 'spend', label: 'Spend' },
  { id: 'logs', label: 'Requests' },
  { id: 'keys', label: 'Keys' },
  { id: 'providers', label: 'Providers' },
];

function Dashboard({ token, signOut, injected }) {
  const api = useMemo(() => makeApi(token, () => signOut('The admin token was refused; enter it again.')), [token, signOut]);
  const route = useHashRoute();
  const [snapshot, setSnapshot] = useState(null);
  const [error, setError] = useState(null);
  const [calls, setCalls] = useState([]);
  const [more, setMore] = useState(true);
  const [live, setLive] = useState('connecting');
  const [tick, setTick] = useState(0);
  const callsRef = useRef(calls);
  callsRef.current = calls;

  const refresh = useCallback(async () => {
    try {
      setSnapshot(await api.get('/admin/snapshot?recent=1'));
      setError(null);
    } catch (err) {
      if (!(err instanceof AuthError)) setError(`Could not reach the gateway: ${err.message}`);
    }
  }, [api]);

  useEffect(() => {
    void refresh();
    api.get('/admin/logs?limit=100').then(
      (b) => {
        setCalls((prev) => mergeCalls(prev, b.calls));
        setMore(b.calls.length === 100);
      },
      (err) => !(err instanceof AuthError) && setError(err.message),
    );
    const poll = setInterval(() => void refresh(), 15_000);
    return () => clearInterval(poll);
  }, [api, refresh]);

  useEffect(() => {
    const ctl = new AbortController();
    let timer = null;
    void followEvents(
      token,
      ctl.signal,
      (event, data) => {
        if (event !== 'call') return;
        let call;
        try {
          call = JSON.parse(data);
        } catch {
          return;
        }
        setCalls((prev) => mergeCalls([call], prev));
        timer ??= setTimeout(() => {
          timer = null;
          void refresh();
          setTick((t) => t + 1);
        }, 300);
      },
      (state) => (state === 'unauthorized' ? signOut('The admin token was refused; enter it again.') : setLive(state)),
    );
    return () => {
      ctl.abort();
      if (timer) clearTimeout(timer);
    };
  }, [token, refresh, signOut]);

  const loadMore = async () => {
    const current = callsRef.current;
    const oldest = current[current.length - 1];
    if (!oldest) return;
    try {
      const b = await api.get(`/admin/logs?limit=100&before=${Date.parse(oldest.time)}`);
      setCalls((prev) => mergeCalls(prev, b.calls));
      setMore(b.calls.length === 100);
    } catch (err) {
      if (!(err instanceof AuthError)) setError(err.message);
    }
  };

  let body;
  if (route.view === 'logs' && route.id) body = h(LogDetail, { api, id: route.id, key: route.id });
  else if (route.view === 'logs') body = h(LogsView, { calls, more, onMore: loadMore, live });
  else if (route.view === 'keys') body = h(KeysView, { api, keys: snapshot?.keys ?? [], refresh });
  else if (route.view === 'providers') body = h(ProvidersView, { providers: snapshot?.providers ?? [] });
  else body = h(SpendView, { api, tick });

  return h(
    Fragment,
    null,
    h(
      'header',
      { className: 'top' },
      h('div', { className: 'brand' }, h('span', { className: 'logo', 'aria-hidden': true }, '◆'), ' Gateway'),
      h(
        'div',
        { className: 'stats', 'data-testid': 'spend-header' },
        h('div', { className: 'stat' }, h('span', { className: 'stat-label' }, 'Today'), h('span', { className: 'stat-value', 'data-testid': 'spend-today' }, snapshot ? fmtUsd(snapshot.spend.today_usd) : '…')),
        h('div', { className: 'stat' }, h('span', { className: 'stat-label' }, 'This month'), h('span', { className: 'stat-value', 'data-testid': 'spend-month' }, snapshot ? fmtUsd(snapshot.spend.month_usd) : '…')),
      ),
      h('span', { className: `live is-${live}`, 'data-testid': 'live-state', title: 'Live updates from /admin/events' }, live === 'live' ? 'live' : live === 'connecting' ? 'connecting…' : 'reconnecting…'),
      injected ? null : h('button', { type: 'button', className: 'secondary', onClick: () => signOut(null) }, 'Sign out'),
    ),
    h('nav', { className: 'tabs' }, TABS.map((t) => h('a', { key: t.id, href: `#/${t.id}`, className: route.view === t.id ? 'on' : undefined, 'aria-current': route.view === t.id ? 'page' : undefined }, t.label))),
    h('main', null, h(ErrorBanner, { message: error }), body),
  );
}

function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  // Without a token of our own: does the admin API answer anyway (the Electron window adds it)?
  const [injected, setInjected] = useState(token === null ? 'probing' : 'no');
  const [notice, setNotice] = useState(null);
  useEffect(() => {
    if (injected !== 'probing') return;
    adminFetch(null, '/admin/snapshot?recent=1').then(
      () => setInjected('yes'),
      () => setInjected('no'),
    );
  }, [injected]);
  const signOut = useCallback((message) => {
    sessionStorage.removeItem(TOKEN_KEY);
    setNotice(message ?? null);
    setToken(null);
    setInjected('no');
  }, []);
  const reprobe = useCallback(() => setInjected('probing'), []);
  if (injected === 'probing') return h('main', { className: 'login' }, h('p', { className: 'muted' }, 'Connecting…'));
  if (injected === 'yes') return h(Dashboard, { token: null, injected: true, signOut: reprobe, key: 'injected' });
  if (!token) {
    return h(LoginForm, {
      notice,
      onToken: (t) => {
        sessionStorage.setItem(TOKEN_KEY, t);
        setNotice(null);
        setToken(t);
      },
    });
  }
  return h(Dashboard, { token, signOut, key: token });
}

ReactDOMClient.createRoot(document.getElementById('root')).render(h(App));

// Requests: the live call log, searched on the server (key, model, status, time range, text), exported
// as CSV; and one request's detail with its attempts and bodies.
import { CostCell, ErrorBanner, fmtInt, fmtMs, fmtTime, fmtUsd, callCost, Fragment, h, prettyBody, StatusBadge, Table, useEffect, useMemo, useState } from './lib.js';

const LOG_COLUMNS = [
  { label: 'Time', cell: (c) => h('a', { href: `#/logs/${encodeURIComponent(c.id)}`, onClick: (e) => e.stopPropagation(), className: 'nowrap' }, fmtTime(c.time)) },
  { label: 'Key', cell: (c) => c.key ?? '—' },
  { label: 'Endpoint', cell: (c) => h('span', { className: 'nowrap' }, c.endpoint, c.stream ? h('span', { className: 'tag' }, 'stream') : null) },
  { label: 'Model', cell: (c) => c.model ?? c.model_requested ?? '—' },
  { label: 'Provider', cell: (c) => c.provider ?? '—' },
  { label: 'Status', cell: (c) => h('span', { className: 'nowrap' }, h(StatusBadge, { status: c.status }), c.error_type ? h('span', { className: 'muted small' }, ` ${c.error_type}`) : null) },
  { label: 'Tokens in/out', num: true, cell: (c) => `${fmtInt(c.input_tokens)} / ${fmtInt(c.output_tokens)}` },
  { label: 'Cost', num: true, cell: (c) => h(CostCell, { call: c }) },
  { label: 'Latency', num: true, cell: (c) => fmtMs(c.latency_ms) },
];

const EMPTY_FILTERS = { key: '', model: '', status: '', since: '', until: '', q: '' };

/** The query string of a search, or '' when nothing is filtered (then the live list is shown). */
export function searchQuery(f) {
  const p = new URLSearchParams();
  for (const name of ['key', 'model', 'status', 'q']) if (f[name].trim() !== '') p.set(name, f[name].trim());
  // datetime-local values are local time: Date.parse reads them so.
  for (const name of ['since', 'until']) if (f[name] !== '') p.set(name, String(Date.parse(f[name])));
  return p.toString();
}

function Filters({ filters, setFilters, keys, models }) {
  const set = (name) => (e) => setFilters({ ...filters, [name]: e.target.value });
  const select = (name, label, options) =>
    h('label', null, h('span', null, label), h('select', { name, value: filters[name], onChange: set(name) }, h('option', { value: '' }, 'any'), options.map((o) => h('option', { key: o, value: o }, o))));
  return h(
    'form',
    { className: 'filters form-row', 'data-testid': 'log-filters', onSubmit: (e) => e.preventDefault() },
    h('label', { className: 'grow' }, h('span', null, 'Search'), h('input', { type: 'search', name: 'q', placeholder: 'id, model, provider, error…', value: filters.q, onChange: set('q'), 'aria-label': 'Search' })),
    select('key', 'Key', keys),
    select('model', 'Model', models),
    h('label', null, h('span', null, 'Status'), h('select', { name: 'status', value: filters.status, onChange: set('status') }, [['', 'any'], ['ok', 'ok'], ['error', 'errors'], ['4xx', '4xx'], ['5xx', '5xx'], ['401', '401'], ['402', '402'], ['429', '429']].map(([v, l]) => h('option', { key: v, value: v }, l)))),
    h('label', null, h('span', null, 'From'), h('input', { type: 'datetime-local', name: 'since', value: filters.since, onChange: set('since') })),
    h('label', null, h('span', null, 'To'), h('input', { type: 'datetime-local', name: 'until', value: filters.until, onChange: set('until') })),
    h('button', { type: 'button', className: 'secondary', onClick: () => setFilters(EMPTY_FILTERS) }, 'Clear'),
  );
}

export function LogsView({ api, calls, onMore, more, live, keys, models }) {
  const [filters, setFilters] = useState(EMPTY_FILTERS);
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  const query = searchQuery(filters);
  useEffect(() => {
    if (query === '') {
      setFound(null);
      return undefined;
    }
    let stale = false;
    // Typing: wait for a pause before asking the server.
    const t = setTimeout(() => {
      api.get(`/admin/logs/search?limit=500&${query}`).then(
        (r) => {
          if (stale) return;
          setFound(r.calls);
          setError(null);
        },
        (err) => !stale && setError(err.message),
      );
    }, 200);
    return () => {
      stale = true;
      clearTimeout(t);
    };
  }, [api, query]);
  const rows = found ?? calls;
  const exportCsv = async () => {
    try {
      await api.download(`/admin/logs.csv?${query}`, `gateway-calls-${new Date().toISOString().slice(0, 10)}.csv`);
    } catch (err) {
      setError(err.message);
    }
  };
  return h(
    'section',
    { 'data-testid': 'logs-view' },
    h(
      'div',
      { className: 'toolbar' },
      h('h2', null, 'Requests'),
      found === null ? h('span', { className: `live is-${live}` }, live === 'live' ? 'live' : live === 'connecting' ? 'connecting…' : 'reconnecting…') : h('span', { className: 'muted small', 'data-testid': 'search-count' }, `${found.length}${found.length === 500 ? '+' : ''} matching`),
      h('button', { type: 'button', className: 'secondary push', 'data-testid': 'export-csv', onClick: exportCsv }, 'Export CSV'),
    ),
    h(Filters, { filters, setFilters, keys, models }),
    h(ErrorBanner, { message: error }),
    h('div', { className: 'card flush' }, h(Table, { columns: LOG_COLUMNS, rows, rowKey: (c) => c.id, onRowClick: (c) => (location.hash = `#/logs/${encodeURIComponent(c.id)}`), testId: 'logs-table', rowTestId: 'log-row', empty: found !== null ? 'No request matches.' : 'No requests yet. Point a client at the base URL and make a call.' })),
    found === null && more && calls.length > 0 ? h('button', { type: 'button', className: 'secondary', onClick: onMore }, 'Load older') : null,
  );
}

function Field({ label, children }) {
  return h(Fragment, null, h('dt', null, label), h('dd', null, children));
}

function Body({ title, text, testId }) {
  const pretty = useMemo(() => prettyBody(text), [text]);
  return h('div', { className: 'card' }, h('h3', null, title), pretty === null ? h('p', { className: 'muted' }, 'Not recorded.') : h('pre', { className: 'body', 'data-testid': testId }, pretty));
}

function costLine(call) {
  const c = callCost(call);
  if (c.kind === 'none') return 'not billed (refused before any provider, or no provider answered)';
  if (c.kind === 'unpriced') return 'unpriced: no price known for this model';
  return `${fmtUsd(call.cost_usd)} (${call.pricing}${call.price_version ? `, prices ${call.price_version}` : ''})`;
}

export function LogDetail({ api, id }) {
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
    h('div', { className: 'toolbar' }, h('a', { href: '#/logs', className: 'back' }, '← Requests'), h('h2', { className: 'break' }, 'Request ', h('code', null, id))),
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
              h(Field, { label: 'Cost' }, costLine(call)),
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

// The gateway dashboard's shell: sign-in, the header, the tabs, the live event stream, and the spend
// view (by day stacked by model, by key, by model). Keys, providers and requests have their own modules.
// Plain ES modules, React without JSX (no build step). It talks only to the admin API, same origin,
// with `Authorization: Bearer <token>`. The admin token is never in a URL or in a served page: a
// one-time code from `gateway ui` (in the URL's fragment, spent on first use) is traded for a session
// token, or the user pastes the admin token; either stays in this tab's sessionStorage. In the Electron
// window the app adds the header to the page's `/admin/` requests itself (desktop/src/dashboard-auth.ts):
// the page notices that an admin call without a token of its own succeeds and never asks for one.
import { ReactDOMClient } from '/ui/vendor/react.js';
import { StackedDayChart } from './charts.js';
import { KeysView } from './keys-view.js';
import { AuthError, adminFetch, authHeader, ErrorBanner, fmtInt, fmtUsd, Fragment, h, makeApi, Table, useCallback, useEffect, useMemo, useRef, useState, UsageCost } from './lib.js';
import { LogDetail, LogsView } from './logs-view.js';
import { ProvidersView } from './providers-view.js';

const TOKEN_KEY = 'gateway.adminToken';
const MAX_CALLS = 2000;

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
      h('p', null, 'Run ', h('code', null, 'gateway ui'), ' in a terminal: it opens this page signed in. Or enter the admin token of this gateway, the file ', h('code', null, 'admin-token'), ' in the data home:'),
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

function usageColumns(label, unpricedOf) {
  return [
    { label, cell: (r) => h('span', { className: 'nowrap' }, r.group) },
    { label: 'Requests', num: true, cell: (r) => fmtInt(r.requests) },
    { label: 'Errors', num: true, cell: (r) => fmtInt(r.errors) },
    { label: 'Input', num: true, cell: (r) => fmtInt(r.input_tokens) },
    { label: 'Output', num: true, cell: (r) => fmtInt(r.output_tokens) },
    { label: 'Cost', num: true, cell: (r) => h(UsageCost, { cost: r.cost_usd, unpriced: unpricedOf(r.group) }) },
  ];
}

function totals(rows, label, unpricedOf) {
  const sum = (f) => rows.reduce((a, r) => a + (r[f] ?? 0), 0);
  const unpriced = rows.reduce((a, r) => a + unpricedOf(r.group), 0);
  return { [label]: 'Total', Requests: fmtInt(sum('requests')), Errors: fmtInt(sum('errors')), Input: fmtInt(sum('input_tokens')), Output: fmtInt(sum('output_tokens')), Cost: h(UsageCost, { cost: sum('cost_usd'), unpriced }) };
}

function SpendView({ api, tick }) {
  const [range, setRange] = useState('30d');
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const since = rangeStart(range);
  useEffect(() => {
    let stale = false;
    const q = since !== null ? `&since=${since}` : '';
    Promise.all([api.get(`/admin/usage/stacked?${q.slice(1)}`), ...['key', 'model'].map((by) => api.get(`/admin/usage?by=${by}${q}`))])
      .then(([stacked, key, model]) => {
        if (stale) return;
        const byModel = new Map();
        for (const r of stacked.rows) byModel.set(r.model, (byModel.get(r.model) ?? 0) + r.unpriced);
        const byKey = new Map(stacked.unpriced_by_key.map((r) => [r.key, r.unpriced]));
        setData({
          stacked: stacked.rows,
          key: key.rows,
          model: model.rows,
          unpricedModel: (g) => byModel.get(g) ?? 0,
          unpricedKey: (g) => byKey.get(g.replace(/ \(deleted\)$/, '')) ?? 0,
        });
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
          h('div', { className: 'card' }, h('h3', null, 'By day and model'), h(StackedDayChart, { rows: data.stacked, since })),
          h(
            'div',
            { className: 'grid2' },
            h('div', { className: 'card' }, h('h3', null, 'By key ', h('span', { className: 'h3-note' }, '(tokens in and out)')), h(Table, { columns: usageColumns('Key', data.unpricedKey), rows: data.key, rowKey: (r) => r.group, testId: 'usage-by-key', foot: data.key.length > 0 ? totals(data.key, 'Key', data.unpricedKey) : null, empty: 'No calls in this range.' })),
            h('div', { className: 'card' }, h('h3', null, 'By model ', h('span', { className: 'h3-note' }, '(tokens in and out)')), h(Table, { columns: usageColumns('Model', data.unpricedModel), rows: data.model, rowKey: (r) => r.group, testId: 'usage-by-model', foot: data.model.length > 0 ? totals(data.model, 'Model', data.unpricedModel) : null, empty: 'No calls in this range.' })),
          ),
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
  const keyNames = (snapshot?.keys ?? []).map((k) => k.name);
  const modelNames = [...new Set((snapshot?.providers ?? []).flatMap((p) => p.models))].sort();
  if (route.view === 'logs' && route.id) body = h(LogDetail, { api, id: route.id, key: route.id });
  else if (route.view === 'logs') body = h(LogsView, { api, calls, more, onMore: loadMore, live, keys: keyNames, models: modelNames });
  else if (route.view === 'keys') body = h(KeysView, { api, keys: snapshot?.keys ?? [], refresh });
  else if (route.view === 'providers') body = h(ProvidersView, { api, providers: snapshot?.providers ?? [], refresh, tick });
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

/**
 * A one-time sign-in link (`/ui/#login=CODE`, from `gateway ui` or `gateway start`): the code leaves
 * the address bar and history at once, then is traded for a session token. Returns a notice on failure.
 */
async function signInFromLink() {
  const m = /^#login=([^&]+)$/.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  try {
    const r = await adminFetch(null, '/admin/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: decodeURIComponent(m[1]) }) });
    sessionStorage.setItem(TOKEN_KEY, r.token);
    return null;
  } catch (err) {
    return err instanceof AuthError ? err.message : `Could not reach the gateway: ${err.message}`;
  }
}

function App({ linkNotice }) {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  // Without a token of our own: does the admin API answer anyway (the Electron window adds it)?
  const [injected, setInjected] = useState(token === null ? 'probing' : 'no');
  const [notice, setNotice] = useState(linkNotice);
  useEffect(() => {
    if (injected !== 'probing') return;
    adminFetch(null, '/admin/snapshot?recent=1').then(
      () => setInjected('yes'),
      () => setInjected('no'),
    );
  }, [injected]);
  const signOut = useCallback((message) => {
    // Asked for by the user (no message): the server ends the session too, so a copy of its token stops working.
    const held = sessionStorage.getItem(TOKEN_KEY);
    if (message == null && held) adminFetch(held, '/admin/logout', { method: 'POST' }).catch(() => undefined);
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

const linkNotice = await signInFromLink();
ReactDOMClient.createRoot(document.getElementById('root')).render(h(App, { linkNotice }));

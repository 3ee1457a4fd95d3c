// Providers: health in plain words, latency and error-rate charts, and actions through the admin API:
// add (the key as an environment variable's name, never the secret), test through the running gateway,
// refresh models, change priority, remove.
import { ProviderCharts } from './charts.js';
import { ConfirmButton, ErrorBanner, fmtUsd, Fragment, h, Table, useEffect, useState } from './lib.js';

const TYPES = ['openai', 'openai-compatible', 'anthropic', 'gemini', 'azure'];
const PRESETS = ['', 'openrouter', 'deepseek', 'groq', 'mistral', 'together', 'xai', 'ollama', 'lmstudio', 'vllm'];

function Health({ p }) {
  if (p.health === 'open') {
    const secs = p.next_probe_at ? Math.max(0, Math.round((p.next_probe_at - Date.now()) / 1000)) : null;
    return h('span', { className: 'badge bad' }, secs !== null ? `failing, retry in ${secs}s` : 'failing');
  }
  if (p.health === 'half-open' || p.health === 'half_open') return h('span', { className: 'badge warn' }, 'trying again');
  return h('span', { className: 'badge ok' }, 'healthy');
}

function AddProviderForm({ api, onAdded }) {
  const empty = { name: '', type: 'openai', preset: '', base_url: '', key_env: '', models: '', priority: '' };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const body = {
      name: form.name.trim(),
      type: form.preset ? 'openai-compatible' : form.type,
      preset: form.preset || null,
      base_url: form.base_url.trim() || null,
      key_env: form.key_env.trim() || null,
      models: form.models.trim() ? form.models.split(',').map((m) => m.trim()).filter(Boolean) : null,
    };
    if (form.priority.trim() !== '') {
      const n = Number(form.priority);
      if (!Number.isInteger(n)) return setError('The priority must be a whole number (lower goes first).');
      body.priority = n;
    }
    setBusy(true);
    try {
      const r = await api.post('/admin/providers', body);
      setForm(empty);
      const models = r.refresh?.ok ? `${r.refresh.models.length} models` : `could not list its models yet (${r.refresh?.error})`;
      onAdded(`Added "${r.name}": ${models}.${r.note ? ` ${r.note}` : ''}`);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  const input = (field, label, props = {}) => h('label', null, h('span', null, label), h('input', { name: field, value: form[field], onChange: set(field), autoComplete: 'off', ...props }));
  return h(
    'form',
    { className: 'card', onSubmit: submit, 'data-testid': 'add-provider-form' },
    h('h3', null, 'Add a provider'),
    h(
      'div',
      { className: 'form-row' },
      input('name', 'Name', { required: true, placeholder: 'openai' }),
      h('label', null, h('span', null, 'Type'), h('select', { name: 'type', value: form.type, onChange: set('type'), disabled: form.preset !== '' }, TYPES.map((t) => h('option', { key: t, value: t }, t)))),
      h('label', null, h('span', null, 'Preset'), h('select', { name: 'preset', value: form.preset, onChange: set('preset') }, PRESETS.map((p) => h('option', { key: p, value: p }, p || '(none)')))),
      input('base_url', 'Base URL', { placeholder: 'default for the type', className: 'wide' }),
      input('key_env', 'Key from env var', { placeholder: 'OPENAI_API_KEY' }),
      input('models', 'Models (comma-separated)', { placeholder: 'ask the provider' }),
      input('priority', 'Priority', { inputMode: 'numeric', placeholder: '100' }),
    ),
    h('p', { className: 'muted small' }, 'The key stays where it is: the gateway reads the variable where it runs, when it sends a request. To keep a key in the OS keychain instead, use ', h('code', null, 'gateway providers add NAME --key-stdin'), '.'),
    h('div', { className: 'form-actions' }, h('button', { type: 'submit', disabled: busy || form.name.trim() === '' }, busy ? 'Adding…' : 'Add provider')),
    h(ErrorBanner, { message: error }),
  );
}

function PriorityEditor({ api, p, onResult }) {
  const [value, setValue] = useState(String(p.priority));
  const changed = value.trim() !== String(p.priority);
  const save = async () => {
    const n = Number(value);
    if (!Number.isInteger(n)) return onResult(null, 'The priority must be a whole number.');
    try {
      await api.patch(`/admin/providers/${encodeURIComponent(p.name)}`, { priority: n });
      onResult(`"${p.name}" now has priority ${n}.`, null);
    } catch (err) {
      onResult(null, err.message);
    }
  };
  return h(
    'span',
    { className: 'priority' },
    h('input', { name: 'priority', 'aria-label': `Priority of ${p.name}`, inputMode: 'numeric', value, onChange: (e) => setValue(e.target.value), onKeyDown: (e) => (e.key === 'Enter' && changed ? void save() : undefined) }),
    changed ? h('button', { type: 'button', className: 'secondary small', 'data-testid': 'provider-priority-save', onClick: save }, 'Save') : null,
  );
}

function ProviderActions({ api, p, onResult }) {
  const path = `/admin/providers/${encodeURIComponent(p.name)}`;
  const [busy, setBusy] = useState(null);
  const run = (what, fn) => async () => {
    setBusy(what);
    try {
      onResult(await fn(), null);
    } catch (err) {
      onResult(null, err.message);
    } finally {
      setBusy(null);
    }
  };
  return h(
    'div',
    { className: 'row-actions' },
    h('button', { type: 'button', className: 'secondary small', 'data-testid': 'provider-test', disabled: busy !== null, onClick: run('test', async () => {
      const r = await api.post(`${path}/test`);
      return { text: `${p.name}: ${r.ok ? 'works' : 'failed'}: ${r.verdict}`, ok: r.ok };
    }) }, busy === 'test' ? 'Testing…' : 'Test'),
    h('button', { type: 'button', className: 'secondary small', 'data-testid': 'provider-refresh', disabled: busy !== null, onClick: run('refresh', async () => {
      const r = await api.post(`${path}/refresh`);
      return r.ok ? `${p.name}: ${r.models.length} models.` : { text: `${p.name}: could not list models: ${r.error}`, ok: false };
    }) }, busy === 'refresh' ? 'Refreshing…' : 'Refresh models'),
    h(ConfirmButton, { label: 'Remove', confirmLabel: 'Remove for good', testId: 'provider-remove', onConfirm: run('remove', async () => {
      const r = await api.del(path);
      return `Removed "${p.name}".${r.note ? ` ${r.note}` : ''}`;
    }) }),
  );
}

export function ProvidersView({ api, providers, refresh, tick }) {
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [stats, setStats] = useState(null);
  useEffect(() => {
    let stale = false;
    const until = Date.now();
    api.get(`/admin/providers/stats?since=${until - 24 * 3_600_000}&until=${until}&buckets=24`).then((r) => !stale && setStats(r.providers), (err) => !stale && setError(err.message));
    return () => {
      stale = true;
    };
  }, [api, tick]);
  const onResult = (r, err) => {
    setError(err);
    setResult(r === null ? null : typeof r === 'string' ? { text: r, ok: true } : r);
    void refresh();
  };
  return h(
    'section',
    { 'data-testid': 'providers-view' },
    h('div', { className: 'toolbar' }, h('h2', null, 'Providers')),
    result ? h('div', { className: `banner ${result.ok ? 'ok' : 'error'}`, role: 'status', 'data-testid': 'provider-result' }, result.text) : null,
    h(ErrorBanner, { message: error }),
    h(
      'div',
      { className: 'card flush' },
      h(Table, {
        columns: [
          { label: 'Name', cell: (p) => h('strong', null, p.name) },
          { label: 'Type', cell: (p) => (p.preset ? `${p.type} (${p.preset})` : p.type) },
          { label: 'Base URL', cell: (p) => h('code', { className: 'small' }, p.base_url) },
          { label: 'Key', cell: (p) => (p.key_source === 'env' ? h('code', { className: 'small' }, `$${p.key_env ?? '…'}`) : p.key_source) },
          { label: 'Priority', cell: (p) => h(PriorityEditor, { api, p, onResult, key: `${p.name}:${p.priority}` }) },
          { label: 'Health', cell: (p) => h(Fragment, null, h(Health, { p }), p.consecutive_failures > 0 ? h('span', { className: 'muted small' }, ` ${p.consecutive_failures} failures in a row`) : null) },
          { label: 'Models', cell: (p) => h('details', null, h('summary', null, `${p.models.length} models`), h('ul', { className: 'models' }, p.models.map((m) => h('li', { key: m }, m)))) },
          { label: 'Today', num: true, cell: (p) => fmtUsd(p.spent_today_usd) },
          { label: 'This month', num: true, cell: (p) => fmtUsd(p.spent_month_usd) },
          { label: 'Actions', cell: (p) => h(ProviderActions, { api, p, onResult }) },
        ],
        rows: providers,
        rowKey: (p) => p.name,
        testId: 'providers-table',
        rowTestId: 'provider-row',
        empty: 'No provider yet: add one below.',
      }),
    ),
    h('div', { className: 'card' }, h('h3', null, 'Latency and errors, last 24 hours'), stats === null ? h('p', { className: 'muted' }, 'Loading…') : h(ProviderCharts, { stats })),
    h(AddProviderForm, { api, onAdded: (msg) => onResult(msg, null) }),
  );
}

// Keys: list with spend against budget, create, and for each key edit (budget, period, limits, allowed
// models), disable, enable, rotate (the new secret shown once) and delete, all through the admin API.
import { ConfirmButton, ErrorBanner, fmtInt, fmtUsd, h, Table, useState } from './lib.js';

function BudgetBar({ k }) {
  if (k.budget_usd === null) return h('span', { className: 'muted' }, `no budget (${fmtUsd(k.spent_usd)} today)`);
  const ratio = k.budget_usd > 0 ? Math.min(1, k.spent_usd / k.budget_usd) : 1;
  const level = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
  return h(
    'div',
    { className: 'budget', title: `${fmtUsd(k.spent_usd)} of ${fmtUsd(k.budget_usd)} (${k.budget_period})` },
    h('div', { className: 'track' }, h('div', { className: `fill ${level}`, style: { width: `${(ratio * 100).toFixed(1)}%` } })),
    h('span', { className: 'small nowrap' }, `${fmtUsd(k.spent_usd)} / ${fmtUsd(k.budget_usd)} ${k.budget_period}`),
  );
}

const numOrNull = (s) => (String(s).trim() === '' ? null : Number(s));
const listOrNull = (s) => (s.trim() === '' ? null : s.split(',').map((m) => m.trim()).filter(Boolean));

/** The form's fields as the admin API wants them, or an error message. */
function limitsBody(form) {
  const budget = numOrNull(form.budget);
  const body = { budget_usd: budget, budget_period: budget !== null ? form.period : null, rpm: numOrNull(form.rpm), tpm: numOrNull(form.tpm), models: listOrNull(form.models) };
  if (budget !== null && !(Number.isFinite(budget) && budget >= 0)) return { error: 'The budget must be a number of USD, 0 or more.' };
  for (const f of ['rpm', 'tpm']) {
    if (body[f] !== null && !(Number.isInteger(body[f]) && body[f] > 0)) return { error: `${f.toUpperCase()} must be a whole number above 0.` };
  }
  return { body };
}

function LimitFields({ form, set }) {
  const input = (field, label, props = {}) => h('label', null, h('span', null, label), h('input', { name: field, value: form[field], onChange: set(field), ...props }));
  return h(
    'div',
    { className: 'form-row' },
    input('budget', 'Budget (USD)', { inputMode: 'decimal', placeholder: 'none' }),
    h('label', null, h('span', null, 'Period'), h('select', { name: 'period', value: form.period, onChange: set('period') }, ['daily', 'monthly', 'total'].map((p) => h('option', { key: p, value: p }, p)))),
    input('rpm', 'RPM', { inputMode: 'numeric', placeholder: '—' }),
    input('tpm', 'TPM', { inputMode: 'numeric', placeholder: '—' }),
    input('models', 'Models (comma-separated)', { placeholder: 'any' }),
  );
}

const EMPTY = { name: '', budget: '', period: 'monthly', rpm: '', tpm: '', models: '' };

function CreateKeyForm({ api, onCreated }) {
  const [form, setForm] = useState(EMPTY);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const { body, error: invalid } = limitsBody(form);
    if (invalid) return setError(invalid);
    if (body.budget_usd === 0) return setError('A new key needs a budget above 0, or none.');
    setBusy(true);
    try {
      const created = await api.post('/admin/keys', { name: form.name.trim(), ...body });
      setForm(EMPTY);
      onCreated({ ...created, how: 'created' });
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return h(
    'form',
    { className: 'card create-key', onSubmit: submit, 'data-testid': 'create-key-form' },
    h('h3', null, 'Create a key'),
    h(
      'div',
      { className: 'form-row' },
      h('label', null, h('span', null, 'Name'), h('input', { name: 'name', value: form.name, onChange: set('name'), required: true, maxLength: 64, placeholder: 'my-tool', autoComplete: 'off' })),
    ),
    h(LimitFields, { form, set }),
    h('div', { className: 'form-actions' }, h('button', { type: 'submit', disabled: busy || form.name.trim() === '' }, busy ? 'Creating…' : 'Create key')),
    h(ErrorBanner, { message: error }),
  );
}

function EditKeyForm({ api, k, onDone }) {
  const [form, setForm] = useState({
    budget: k.budget_usd === null ? '' : String(k.budget_usd),
    period: k.budget_period ?? 'monthly',
    rpm: k.rpm === null ? '' : String(k.rpm),
    tpm: k.tpm === null ? '' : String(k.tpm),
    models: k.models ? k.models.join(', ') : '',
  });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    const { body, error: invalid } = limitsBody(form);
    if (invalid) return setError(invalid);
    setBusy(true);
    try {
      await api.patch(`/admin/keys/${encodeURIComponent(k.name)}`, body);
      onDone(`Saved the limits of "${k.name}".`);
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  return h(
    'form',
    { className: 'card edit-key', onSubmit: submit, 'data-testid': 'edit-key-form' },
    h('h3', null, `Edit "${k.name}"`),
    h(LimitFields, { form, set }),
    h('div', { className: 'form-actions' }, h('button', { type: 'submit', disabled: busy }, busy ? 'Saving…' : 'Save'), h('button', { type: 'button', className: 'secondary', onClick: () => onDone(null) }, 'Cancel')),
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
    h('h3', null, created.how === 'rotated' ? `Key "${created.name}" rotated` : `Key "${created.name}" created`),
    h('p', null, created.how === 'rotated' ? 'The old secret no longer works. Copy the new one now: it is shown once.' : 'Copy it now: it is shown once and the gateway keeps only its hash.'),
    h('div', { className: 'secret-row' }, h('code', { 'data-testid': 'new-key-secret' }, created.key), h('button', { type: 'button', className: 'secondary', onClick: copy }, copied ? 'Copied' : 'Copy'), h('button', { type: 'button', onClick: onDone }, 'Done')),
  );
}

function KeyActions({ api, k, onEdit, onResult, onSecret }) {
  const path = `/admin/keys/${encodeURIComponent(k.name)}`;
  const run = (fn, message) => async () => {
    try {
      const r = await fn();
      onResult(typeof message === 'function' ? message(r) : message, null);
    } catch (err) {
      onResult(null, err.message);
    }
  };
  return h(
    'div',
    { className: 'row-actions', 'data-testid': 'key-actions' },
    h('button', { type: 'button', className: 'secondary small', 'data-testid': 'key-edit', onClick: () => onEdit(k) }, 'Edit'),
    k.state === 'active'
      ? h('button', { type: 'button', className: 'secondary small', 'data-testid': 'key-disable', onClick: run(() => api.post(`${path}/disable`), `Disabled "${k.name}": calls with it are refused.`) }, 'Disable')
      : h('button', { type: 'button', className: 'secondary small', 'data-testid': 'key-enable', onClick: run(() => api.post(`${path}/enable`), `Enabled "${k.name}".`) }, 'Enable'),
    h(ConfirmButton, {
      label: 'Rotate',
      confirmLabel: 'Rotate now',
      testId: 'key-rotate',
      onConfirm: run(async () => {
        const r = await api.post(`${path}/rotate`);
        onSecret({ name: r.name, key: r.key, how: 'rotated' });
        return r;
      }, null),
    }),
    h(ConfirmButton, { label: 'Delete', confirmLabel: 'Delete for good', testId: 'key-delete', onConfirm: run(() => api.del(path), `Deleted "${k.name}"; its calls stay in the log.`) }),
  );
}

export function KeysView({ api, keys, refresh }) {
  const [created, setCreated] = useState(null);
  const [editing, setEditing] = useState(null);
  const [message, setMessage] = useState(null);
  const [error, setError] = useState(null);
  const onResult = (msg, err) => {
    setMessage(msg);
    setError(err);
    void refresh();
  };
  // Keys closest to (or over) their budget first, then the rest by name.
  const rows = keys
    .filter((k) => k.state !== 'deleted')
    .slice()
    .sort((a, b) => {
      const ra = a.budget_usd ? a.spent_usd / a.budget_usd : -1;
      const rb = b.budget_usd ? b.spent_usd / b.budget_usd : -1;
      return rb - ra || a.name.localeCompare(b.name);
    });
  return h(
    'section',
    { 'data-testid': 'keys-view' },
    h('div', { className: 'toolbar' }, h('h2', null, 'Keys')),
    created ? h(NewSecret, { created, onDone: () => setCreated(null) }) : null,
    message ? h('div', { className: 'banner ok', role: 'status', 'data-testid': 'keys-message' }, message) : null,
    h(ErrorBanner, { message: error }),
    editing
      ? h(EditKeyForm, {
          api,
          k: editing,
          key: editing.name,
          onDone: (msg) => {
            setEditing(null);
            if (msg) onResult(msg, null);
          },
        })
      : null,
    h(
      'div',
      { className: 'card flush' },
      h(Table, {
        columns: [
          { label: 'Name', cell: (k) => h('strong', null, k.name) },
          { label: 'Key', cell: (k) => h('code', null, `${k.prefix}…`) },
          { label: 'State', cell: (k) => h('span', { className: `badge ${k.state === 'active' ? 'ok' : k.state === 'disabled' ? 'warn' : 'muted'}`, 'data-testid': 'key-state' }, k.state) },
          { label: 'Spend / budget', cell: (k) => h(BudgetBar, { k }) },
          { label: 'Limits', cell: (k) => h('span', { className: 'nowrap' }, [k.rpm ? `${fmtInt(k.rpm)} rpm` : null, k.tpm ? `${fmtInt(k.tpm)} tpm` : null].filter(Boolean).join(', ') || '—') },
          { label: 'Models', cell: (k) => (k.models && k.models.length > 0 ? k.models.join(', ') : 'any') },
          { label: 'Actions', cell: (k) => h(KeyActions, { api, k, onEdit: setEditing, onResult, onSecret: setCreated }) },
        ],
        rows,
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
        void refresh();
      },
    }),
  );
}

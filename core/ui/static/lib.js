// Shared pieces of the dashboard page: React's `h`, number formats (with unpriced and estimated figures
// marked as such), the admin API client, and small components. Plain ES module, no build step.
import { React } from '/ui/vendor/react.js';

export const { createElement: h, Fragment, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } = React;

// ---------------------------------------------------------------------------------------------------
// Formatting

export function fmtUsd(v) {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '$0.00';
  const a = Math.abs(v);
  return '$' + (a >= 1 ? v.toFixed(2) : a >= 0.01 ? v.toFixed(4) : v.toFixed(6));
}
export const fmtInt = (v) => (v === null || v === undefined ? '—' : Math.round(v).toLocaleString('en-US'));
export const fmtMs = (v) => (v === null || v === undefined ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
export const fmtPct = (v) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(v > 0 && v < 0.1 ? 1 : 0)}%`);
const pad = (n) => String(n).padStart(2, '0');
export const dayKey = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

export function fmtTime(iso) {
  const d = new Date(iso);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return dayKey(d) === dayKey(new Date()) ? time : `${dayKey(d)} ${time}`;
}

/**
 * A call's cost as the page shows it. A call the gateway refused before any provider (bad key, budget,
 * limits, unknown model) cost nothing and is not "unpriced": it shows a dash. An unpriced call that did
 * reach a provider is marked, never `$0.00`; an estimated one carries "est.".
 */
export function callCost(c) {
  if (c.provider === null || (c.cost_usd === null && c.status >= 400)) return { text: '—', kind: 'none', title: 'Not billed: the gateway refused the call or no provider answered.' };
  if (c.pricing === 'unpriced' || c.cost_usd === null) return { text: 'unpriced', kind: 'unpriced', title: 'No price known for this model: set one with `gateway prices set`.' };
  if (c.pricing === 'estimated') return { text: `~${fmtUsd(c.cost_usd)}`, kind: 'estimated', title: 'Estimated: the provider reported no usage, tokens were counted locally.' };
  return { text: fmtUsd(c.cost_usd), kind: 'priced', title: null };
}

export function CostCell({ call }) {
  const c = callCost(call);
  return h('span', { className: `cost ${c.kind}`, title: c.title ?? undefined, 'data-pricing': c.kind }, c.text, c.kind === 'estimated' ? h('span', { className: 'tag warn' }, 'est.') : null);
}

/**
 * A usage row's cost: the priced sum, plus how many answered calls it leaves out for want of a price
 * (`unpriced` here counts only calls that reached a provider; refused calls cost nothing).
 */
export function UsageCost({ cost, unpriced }) {
  if (unpriced > 0 && cost === 0) return h('span', { className: 'cost unpriced', title: `${unpriced} calls have no price` }, 'unpriced');
  return h(
    Fragment,
    null,
    fmtUsd(cost),
    unpriced > 0 ? h('div', { className: 'tag warn below', title: `${unpriced} calls have no price and are not in this sum` }, `+${unpriced} unpriced`) : null,
  );
}

export function prettyBody(text) {
  if (text === null || text === undefined || text === '') return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------------
// The admin API

export class AuthError extends Error {}

/** `token` null: send no Authorization of our own (the Electron window adds it). */
export const authHeader = (token) => (token === null ? {} : { authorization: `Bearer ${token}` });

export async function adminFetch(token, path, init = {}) {
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

export function makeApi(token, onUnauthorized) {
  const call = async (path, init) => {
    try {
      return await adminFetch(token, path, init);
    } catch (err) {
      if (err instanceof AuthError) onUnauthorized();
      throw err;
    }
  };
  const withJson = (method) => (path, json) => call(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(json ?? {}) });
  return {
    token,
    get: (path) => call(path),
    post: withJson('POST'),
    patch: withJson('PATCH'),
    del: (path) => call(path, { method: 'DELETE' }),
    /** A file download: fetched with the header (a plain link could not carry it), saved from a blob. */
    async download(path, filename) {
      const res = await fetch(path, { headers: authHeader(token), cache: 'no-store' });
      if (res.status === 401) onUnauthorized();
      if (!res.ok) throw new Error(`export failed: HTTP ${res.status}`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Small components

export function ErrorBanner({ message }) {
  return message ? h('div', { className: 'banner error', role: 'alert' }, message) : null;
}

export function Notice({ message, testId }) {
  return message ? h('div', { className: 'banner ok', role: 'status', 'data-testid': testId }, message) : null;
}

export function StatusBadge({ status }) {
  const cls = status < 400 ? 'ok' : status === 499 ? 'warn' : 'bad';
  return h('span', { className: `badge ${cls}` }, String(status));
}

export function Table({ columns, rows, rowKey, onRowClick, empty, testId, rowTestId, foot }) {
  return h(
    'div',
    { className: 'table-scroll' },
    h(
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
    ),
  );
}

/** The pixel width of an element, followed as it changes: charts draw at their real size so labels stay readable. */
export function useWidth(fallback = 720) {
  const ref = useRef(null);
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const measure = () => setWidth(Math.max(200, Math.floor(el.getBoundingClientRect().width)));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/** A button that asks once more before doing something that cannot be undone. */
export function ConfirmButton({ label, confirmLabel, onConfirm, className, testId, disabled }) {
  const [armed, setArmed] = useState(false);
  if (!armed) return h('button', { type: 'button', className: className ?? 'secondary small', 'data-testid': testId, disabled, onClick: () => setArmed(true) }, label);
  return h(
    'span',
    { className: 'confirm' },
    h('button', { type: 'button', className: 'danger small', 'data-testid': testId ? `${testId}-confirm` : undefined, onClick: () => { setArmed(false); onConfirm(); } }, confirmLabel),
    h('button', { type: 'button', className: 'secondary small', onClick: () => setArmed(false) }, 'Cancel'),
  );
}

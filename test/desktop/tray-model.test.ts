/**
 * The tray's title, tooltip and menu, built from the admin snapshot of a real gateway (demo provider,
 * a key with a daily budget, a few calls): the title is today's spend, each key has its budget line
 * with a percentage, each provider its health; the tray's admin client creates a key over the admin
 * API; and the dashboard window's header injection is what lets the page reach the admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from '../../cli/tui/format.ts';
import { createKey, fetchSnapshot, readAdminToken } from '../../desktop/src/admin-client.ts';
import type { AdminSnapshot } from '../../desktop/src/admin-client.ts';
import { budgetAlerts } from '../../desktop/src/budget-alerts.ts';
import { withAdminToken } from '../../desktop/src/dashboard-auth.ts';
import { buildTrayModel, dashboardUrl, keyLine, newKeyName, percentUsed, providerLine } from '../../desktop/src/tray-model.ts';
import type { TrayAction, TrayInput, TrayItem } from '../../desktop/src/tray-model.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const BUDGET = 0.0001;
let t: TestGateway;
let snap: AdminSnapshot;
let spent = 0;

beforeAll(async () => {
  t = await startTestGateway({ demo: true, keys: [{ name: 'ci-bot', budgetUsd: BUDGET, budgetPeriod: 'daily' }, { name: 'laptop' }] });
  const client = t.client({ apiKey: t.keys['ci-bot'] });
  for (const text of ['hello', 'how are you today', 'one more']) {
    const r = await client.chat.completions.create({ model: 'demo-chat', max_tokens: 10, messages: [{ role: 'user', content: text }] });
    spent += (r.usage as unknown as { cost: number }).cost;
  }
  t.flush();
  snap = await fetchSnapshot({ adminUrl: t.gw.url, adminToken: readAdminToken(t.home) });
});
afterAll(async () => {
  await t?.close();
});

const running = (over: Partial<TrayInput> = {}): TrayInput => ({
  status: 'running',
  server: { url: t.gw.url, baseUrl: t.baseUrl },
  snapshot: snap,
  owned: false,
  error: null,
  now: Date.now(),
  ...over,
});

const labels = (items: TrayItem[]) => items.flatMap((i) => (i.type === 'label' ? [i.label.trim()] : []));
const actionItem = (items: TrayItem[], a: TrayAction) => items.find((i): i is Extract<TrayItem, { type: 'action' }> => i.type === 'action' && i.action === a);

describe('tray model from a real snapshot', () => {
  it('the title and tooltip show today’s spend, the sum of the calls’ own costs', () => {
    expect(spent).toBeGreaterThan(0);
    expect(snap.spend.today_usd).toBeCloseTo(spent, 12);
    const m = buildTrayModel(running());
    expect(m.title).toBe(money(spent));
    expect(m.tooltip).toContain(`${money(spent)} today`);
    expect(m.tooltip).toContain(t.baseUrl);
    expect(labels(m.items)[0]).toBe(`Today ${money(spent)} · this month ${money(snap.spend.month_usd)}`);
  });

  it('has a budget line with its percentage per key, and a spend line for a key without a budget', () => {
    const ci = snap.keys.find((k) => k.name === 'ci-bot')!;
    expect(ci.spent_usd).toBeCloseTo(spent, 12);
    const pct = percentUsed(spent, BUDGET);
    expect(pct).toBeGreaterThan(0);
    expect(pct).toBeLessThan(100);
    const lines = labels(buildTrayModel(running()).items);
    expect(lines).toContain(`ci-bot: ${money(ci.spent_usd)} of ${money(BUDGET)} daily (${pct}%)`);
    expect(lines).toContain('laptop: $0.00 today, no budget');
    // The budgeted key comes first: it is what a glance is for.
    expect(lines.findIndex((l) => l.startsWith('ci-bot'))).toBeLessThan(lines.findIndex((l) => l.startsWith('laptop')));
  });

  it('shows each provider’s health, and a down provider with its failures and next probe', () => {
    expect(labels(buildTrayModel(running()).items)).toContain('demo: healthy');
    const now = Date.now();
    const down = { ...snap.providers[0], health: 'open', consecutive_failures: 3, next_probe_at: now + 12_000 };
    expect(providerLine(down, now)).toBe('demo: down (3 failures, next probe in 12s)');
    expect(providerLine({ ...down, health: 'half-open' }, now)).toBe('demo: probing');
  });

  it('offers copy base URL, create key, open dashboard and stop while running', () => {
    const m = buildTrayModel(running({ owned: true }));
    expect(actionItem(m.items, 'copy-base-url')).toMatchObject({ enabled: true, label: `Copy base URL (${t.baseUrl})` });
    expect(actionItem(m.items, 'create-key')?.enabled).toBe(true);
    expect(actionItem(m.items, 'open-dashboard')?.enabled).toBe(true);
    expect(actionItem(m.items, 'stop')?.enabled).toBe(true);
    expect(actionItem(m.items, 'start')).toBeUndefined();
    expect(actionItem(m.items, 'quit')?.label).toMatch(/stops the gateway/);
    expect(dashboardUrl(t.gw.url)).toBe(`${t.gw.url}/ui`);
  });

  it('while stopped: "off", Start enabled, gateway actions disabled, the error shown', () => {
    const m = buildTrayModel({ status: 'stopped', server: null, snapshot: null, owned: false, error: 'Port 4141 is already in use', now: Date.now() });
    expect(m.title).toBe('off');
    expect(actionItem(m.items, 'start')?.enabled).toBe(true);
    expect(actionItem(m.items, 'copy-base-url')?.enabled).toBe(false);
    expect(actionItem(m.items, 'open-dashboard')?.enabled).toBe(false);
    expect(labels(m.items)).toContain('⚠ Port 4141 is already in use');
    expect(actionItem(m.items, 'quit')?.label).toBe('Quit');
  });

  it('an exhausted key says so', () => {
    const ci = snap.keys.find((k) => k.name === 'ci-bot')!;
    expect(keyLine({ ...ci, spent_usd: BUDGET * 1.5 })).toBe(`ci-bot: ${money(BUDGET * 1.5)} of ${money(BUDGET)} daily (150%, spent)`);
  });

  it('the first real snapshot past 50% announces the key once', () => {
    const first = budgetAlerts(null, snap, Date.now());
    expect(first.alerts.map((a) => [a.key, a.threshold])).toEqual([['ci-bot', 50]]);
    expect(budgetAlerts(first.memory, snap, Date.now()).alerts).toEqual([]);
  });

  it('creates a key over the admin API and returns its secret once', async () => {
    const endpoint = { adminUrl: t.gw.url, adminToken: readAdminToken(t.home) };
    const name = newKeyName(new Date(), snap.keys);
    expect(name).toMatch(/^tray-\d{8}-\d{6}$/);
    const created = await createKey(endpoint, { name });
    expect(created.name).toBe(name);
    expect(created.key).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    const models = await fetch(`${t.baseUrl}/models`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(models.status).toBe(200);
    const after = await fetchSnapshot(endpoint);
    expect(after.keys.map((k) => k.name)).toContain(name);
    expect(JSON.stringify(after)).not.toContain(created.key);
    // A taken name gets the next free suffix; a deleted key's name is free again.
    const at = new Date(2025, 5, 1, 9, 5, 7);
    const taken = { ...after.keys[0], name: 'tray-20250601-090507' };
    expect(newKeyName(at, [taken])).toBe('tray-20250601-090507-2');
    expect(newKeyName(at, [taken, { ...taken, name: 'tray-20250601-090507-2' }])).toBe('tray-20250601-090507-3');
    expect(newKeyName(at, [{ ...taken, state: 'deleted' }])).toBe('tray-20250601-090507');
  });

  it('the dashboard session’s header injection is what opens the admin API to the page', async () => {
    const url = `${t.gw.url}/admin/snapshot`;
    const bare = await fetch(url);
    expect(bare.status).toBe(401);
    const injected = await fetch(url, { headers: withAdminToken(url, {}, { url: t.gw.url, adminToken: t.gw.adminToken }) });
    expect(injected.status).toBe(200);
    // The same request for /v1 goes out untouched.
    expect(withAdminToken(`${t.baseUrl}/models`, {}, { url: t.gw.url, adminToken: t.gw.adminToken })).toEqual({});
  });
});

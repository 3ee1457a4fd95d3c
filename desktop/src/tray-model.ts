/**
 * What the tray shows, as plain data: the title (today's spend, next to the icon on macOS), the
 * tooltip, and the menu. Built from an admin snapshot and the tray's own state; `main.ts` turns it
 * into Electron objects. No Electron here, so tests build it from a real gateway's snapshot.
 */
import { money, until } from 'gateway-local';
import type { AdminSnapshot, KeySummary, ProviderSummary } from './admin-client.ts';

export type GatewayStatus = 'stopped' | 'starting' | 'running' | 'stopping';

export type TrayAction = 'copy-base-url' | 'create-key' | 'open-dashboard' | 'start' | 'stop' | 'quit';

export type TrayItem =
  | { type: 'separator' }
  /** A line of information (shown disabled). */
  | { type: 'label'; label: string }
  | { type: 'action'; action: TrayAction; label: string; enabled: boolean };

export interface TrayModel {
  /** Short: today's spend while running. */
  title: string;
  tooltip: string;
  items: TrayItem[];
}

export interface TrayInput {
  status: GatewayStatus;
  /** The gateway the tray talks to (from `server.json`), while running. */
  server: { url: string; baseUrl: string } | null;
  /** The last admin snapshot, or null before the first one arrives. */
  snapshot: AdminSnapshot | null;
  /** Whether this tray started the gateway (quitting the tray then stops it). */
  owned: boolean;
  /** The last failure worth showing (a start that failed, an unreachable admin API). */
  error: string | null;
  /** Epoch ms, for "next probe in 12s". */
  now: number;
}

/** The dashboard page the gateway serves. */
export function dashboardUrl(gatewayUrl: string): string {
  return `${gatewayUrl.replace(/\/+$/, '')}/ui`;
}

/** Whole percent used, rounded down so "100%" only ever means the budget is spent. */
export function percentUsed(spent: number, budget: number): number {
  if (!(budget > 0)) return 100;
  // The epsilon keeps 0.29 / 1 (28.999999999999996 %) at 29.
  return Math.floor((spent / budget) * 100 + 1e-9);
}

const periodWord = (p: string | null): string => (p === 'daily' ? 'daily' : p === 'monthly' ? 'monthly' : 'total');

export function keyLine(k: KeySummary): string {
  const state = k.state === 'active' ? '' : ` [${k.state}]`;
  if (k.budget_usd === null) return `${k.name}: ${money(k.spent_usd)} today, no budget${state}`;
  const pct = percentUsed(k.spent_usd, k.budget_usd);
  const spent = pct >= 100 ? ', spent' : '';
  return `${k.name}: ${money(k.spent_usd)} of ${money(k.budget_usd)} ${periodWord(k.budget_period)} (${pct}%${spent})${state}`;
}

export function providerLine(p: ProviderSummary, now: number): string {
  if (p.health === 'open') {
    const probe = until(p.next_probe_at, now);
    const failures = `${p.consecutive_failures} failure${p.consecutive_failures === 1 ? '' : 's'}`;
    return `${p.name}: down (${failures}${probe ? `, next probe ${probe}` : ''})`;
  }
  if (p.health === 'half-open') return `${p.name}: probing`;
  return `${p.name}: healthy`;
}

const label = (text: string): TrayItem => ({ type: 'label', label: text });
const action = (a: TrayAction, text: string, enabled: boolean): TrayItem => ({ type: 'action', action: a, label: text, enabled });
const SEPARATOR: TrayItem = { type: 'separator' };

export function buildTrayModel(input: TrayInput): TrayModel {
  const { status, server, snapshot } = input;
  const running = status === 'running' && server !== null;
  const items: TrayItem[] = [];

  let title: string;
  let tooltip: string;
  if (running && snapshot) {
    title = money(snapshot.spend.today_usd);
    tooltip = `Gateway: ${money(snapshot.spend.today_usd)} today, ${money(snapshot.spend.month_usd)} this month\n${server.baseUrl}`;
    items.push(label(`Today ${money(snapshot.spend.today_usd)} · this month ${money(snapshot.spend.month_usd)}`));
  } else if (running) {
    title = '…';
    tooltip = `Gateway: ${server.baseUrl}`;
    items.push(label(`Gateway at ${server.baseUrl}`));
  } else {
    title = status === 'starting' ? 'starting…' : status === 'stopping' ? 'stopping…' : 'off';
    tooltip = `Gateway: ${status === 'stopped' ? 'not running' : status}`;
    items.push(label(status === 'stopped' ? 'Gateway is not running' : status === 'starting' ? 'Starting the gateway…' : 'Stopping the gateway…'));
  }
  if (input.error) {
    items.push(label(`⚠ ${input.error.length > 120 ? `${input.error.slice(0, 119)}…` : input.error}`));
    tooltip += `\n${input.error}`;
  }

  if (running && snapshot) {
    const keys = snapshot.keys.filter((k) => k.state !== 'deleted');
    items.push(SEPARATOR, label('Keys'));
    if (keys.length === 0) items.push(label('  no keys yet'));
    // Keys with a budget first, the most used on top: they are what a glance at the tray is for.
    const used = (k: KeySummary) => (k.budget_usd === null ? -1 : k.budget_usd > 0 ? k.spent_usd / k.budget_usd : Infinity);
    for (const k of [...keys].sort((a, b) => used(b) - used(a))) items.push(label(`  ${keyLine(k)}`));

    items.push(SEPARATOR, label('Providers'));
    if (snapshot.providers.length === 0) items.push(label('  no providers yet'));
    for (const p of snapshot.providers) items.push(label(`  ${providerLine(p, input.now)}`));
  }

  items.push(
    SEPARATOR,
    action('copy-base-url', running ? `Copy base URL (${server.baseUrl})` : 'Copy base URL', running),
    action('create-key', 'Create a new key and copy it', running),
    action('open-dashboard', 'Open dashboard', running),
    SEPARATOR,
  );
  if (status === 'running') items.push(action('stop', 'Stop gateway', true));
  else if (status === 'stopped') items.push(action('start', 'Start gateway', true));
  else items.push(action(status === 'starting' ? 'start' : 'stop', status === 'starting' ? 'Starting gateway…' : 'Stopping gateway…', false));
  items.push(action('quit', input.owned && status === 'running' ? 'Quit (stops the gateway it started)' : 'Quit', true));

  return { title, tooltip, items };
}

/**
 * A name for a key made from the tray: `tray-YYYYMMDD-HHMMSS` (local time), with `-2`, `-3`... when
 * that name is taken by a key that is not deleted.
 */
export function newKeyName(now: Date, existing: readonly KeySummary[]): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const base = `tray-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  const taken = new Set(existing.filter((k) => k.state !== 'deleted').map((k) => k.name));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

/**
 * The Electron tray: the only file that imports `electron`. Everything it shows or decides comes from
 * the pure modules beside it (tray-model, budget-alerts, dashboard-auth) and gateway-process; this
 * file wires them to Tray, Menu, clipboard, Notification and the dashboard window.
 *
 * Loop: every 3 s, while connected, fetch the admin snapshot, rebuild the menu, show budget
 * notifications; while stopped, look for a gateway someone else started (and attach to it).
 * At launch it attaches to the running gateway or starts one.
 */
import { app, BrowserWindow, clipboard, Menu, nativeImage, Notification, session, shell, Tray } from 'electron';
import type { MenuItemConstructorOptions, NativeImage, Session } from 'electron';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey, fetchSnapshot } from './admin-client.ts';
import type { AdminSnapshot } from './admin-client.ts';
import { budgetAlerts } from './budget-alerts.ts';
import type { AlertMemory } from './budget-alerts.ts';
import { staysInDashboard, withAdminToken } from './dashboard-auth.ts';
import { ensureGateway, findGateway, startOptionsFromEnv, stopGateway } from './gateway-process.ts';
import type { GatewayConnection, StartOptions } from './gateway-process.ts';
import { buildTrayModel, dashboardUrl, newKeyName } from './tray-model.ts';
import type { GatewayStatus, TrayAction, TrayItem } from './tray-model.ts';

/** How often the snapshot is fetched; `GATEWAY_TRAY_POLL_MS` overrides it (tests use a short one). */
const POLL_MS = Number(process.env.GATEWAY_TRAY_POLL_MS) || 3_000;
const ASSETS = fileURLToPath(new URL('../assets/', import.meta.url));

let options: StartOptions | null = null;
let configError: string | null = null;
try {
  options = startOptionsFromEnv(process.env);
} catch (err) {
  configError = message(err);
}

let tray: Tray | null = null;
let dashboard: BrowserWindow | null = null;
let dashboardSession: Session | null = null;
let conn: GatewayConnection | null = null;
let status: GatewayStatus = 'stopped';
let snapshot: AdminSnapshot | null = null;
let error: string | null = configError;
let alertMemory: AlertMemory | null = null;
let starting: Promise<void> | null = null;
let ticking = false;
let quitting = false;

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
}

function notify(title: string, body: string): void {
  if (Notification.isSupported()) new Notification({ title, body }).show();
}

function toMenuItem(item: TrayItem): MenuItemConstructorOptions {
  if (item.type === 'separator') return { type: 'separator' };
  if (item.type === 'label') return { label: item.label, enabled: false };
  return { label: item.label, enabled: item.enabled, click: () => void run(item.action) };
}

let shown = '';

function render(): void {
  if (!tray || tray.isDestroyed()) return;
  const model = buildTrayModel({ status, server: conn, snapshot, owned: conn?.owned ?? false, error, now: Date.now() });
  // Replacing the menu closes it on some desktops if it is open: only when something changed.
  const key = JSON.stringify(model);
  if (key === shown) return;
  shown = key;
  // The title sits next to the icon on macOS only; elsewhere the tooltip and the menu's first line carry the spend.
  if (process.platform === 'darwin') tray.setTitle(model.title);
  tray.setToolTip(model.tooltip);
  tray.setContextMenu(Menu.buildFromTemplate(model.items.map(toMenuItem)));
}

function attach(c: GatewayConnection): void {
  conn = c;
  status = 'running';
  snapshot = null;
  error = null;
  if (c.owned) {
    void c.exited.then((e) => {
      // A stop we asked for is handled by stop(); anything else is news.
      if (conn === c && status === 'running') detach(`The gateway exited (${e.signal ?? `code ${String(e.code)}`}); its output is in tray-gateway.log in the data home.`);
    });
  }
  void tick();
}

function detach(reason: string | null): void {
  conn = null;
  status = 'stopped';
  snapshot = null;
  error = reason;
  render();
}

/** One poll: refresh the snapshot while connected, look for a gateway while stopped. */
async function tick(): Promise<void> {
  if (ticking || quitting || !options) return;
  ticking = true;
  try {
    const c = conn;
    if (status === 'running' && c) {
      // Asked before the gateway computes it: see budgetAlerts on why the request time counts.
      const at = Date.now();
      try {
        const snap = await fetchSnapshot({ adminUrl: c.url, adminToken: c.adminToken });
        if (conn !== c) return;
        snapshot = snap;
        error = null;
        const { alerts, memory } = budgetAlerts(alertMemory, snap, at);
        alertMemory = memory;
        for (const a of alerts) notify(a.title, a.body);
      } catch (err) {
        if (conn !== c) return;
        const again = await findGateway(c.home);
        if (!again) detach('The gateway is no longer running.');
        else if (again.pid !== c.pid) attach(again);
        else {
          c.adminToken = again.adminToken; // a replaced admin-token file
          error = `Admin API: ${message(err)}`;
        }
      }
    } else if (status === 'stopped') {
      const found = await findGateway(options.home);
      if (found && status === 'stopped' && !quitting) attach(found);
    }
  } finally {
    ticking = false;
    render();
  }
}

function start(): Promise<void> {
  if (status !== 'stopped' || !options) return starting ?? Promise.resolve();
  const opts = options;
  status = 'starting';
  error = null;
  render();
  starting = (async () => {
    try {
      attach(await ensureGateway(opts));
    } catch (err) {
      status = 'stopped';
      error = message(err);
    } finally {
      starting = null;
      render();
    }
  })();
  return starting;
}

async function stop(): Promise<void> {
  const c = conn;
  if (status !== 'running' || !c) return;
  status = 'stopping';
  render();
  try {
    await stopGateway(c);
  } catch (err) {
    error = message(err);
  }
  if (conn === c) detach(null);
}

async function run(action: TrayAction): Promise<void> {
  try {
    switch (action) {
      case 'copy-base-url':
        if (conn) clipboard.writeText(conn.baseUrl);
        return;
      case 'create-key': {
        if (!conn) return;
        const created = await createKey({ adminUrl: conn.url, adminToken: conn.adminToken }, { name: newKeyName(new Date(), snapshot?.keys ?? []) });
        clipboard.writeText(created.key);
        notify(`New key "${created.name}" copied`, 'Paste it into your tool now: the gateway never shows a key again.');
        void tick();
        return;
      }
      case 'open-dashboard':
        openDashboard();
        return;
      case 'start':
        return await start();
      case 'stop':
        return await stop();
      case 'quit':
        app.quit();
        return;
    }
  } catch (err) {
    error = message(err);
    render();
  }
}

/**
 * The dashboard's own session (in memory, not shared with anything else), whose every request passes
 * through `withAdminToken`: requests for `<gateway>/admin/*` get the admin token as a header, the page
 * never sees it (see dashboard-auth.ts).
 */
function dashboardSessionOnce(): Session {
  if (dashboardSession) return dashboardSession;
  const ses = session.fromPartition('gateway-dashboard');
  ses.webRequest.onBeforeSendHeaders((details, callback) => {
    callback({ requestHeaders: withAdminToken(details.url, details.requestHeaders, conn) });
  });
  dashboardSession = ses;
  return ses;
}

function openOutside(url: string): void {
  if (/^https?:\/\//i.test(url)) void shell.openExternal(url);
}

function openDashboard(): void {
  if (!conn) return;
  const target = dashboardUrl(conn.url);
  if (dashboard && !dashboard.isDestroyed()) {
    // The gateway may have restarted on another port since the window opened.
    if (!staysInDashboard(dashboard.webContents.getURL(), conn.url)) void dashboard.loadURL(target);
    dashboard.show();
    dashboard.focus();
    return;
  }
  const win = new BrowserWindow({
    width: 1280,
    height: 860,
    title: 'Gateway',
    autoHideMenuBar: true,
    webPreferences: { session: dashboardSessionOnce(), contextIsolation: true, nodeIntegration: false, sandbox: true },
  });
  // Only the gateway's own pages load here; links elsewhere open in the user's browser.
  win.webContents.setWindowOpenHandler(({ url }) => {
    openOutside(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (details) => {
    if (conn && staysInDashboard(details.url, conn.url)) return;
    details.preventDefault();
    openOutside(details.url);
  });
  win.on('closed', () => {
    if (dashboard === win) dashboard = null;
  });
  void win.loadURL(target);
  dashboard = win;
}

function trayIcon(): NativeImage {
  // A template image (alpha only) lets macOS draw it for light and dark menu bars.
  const file = process.platform === 'darwin' ? 'trayTemplate.png' : 'tray.png';
  return nativeImage.createFromPath(path.join(ASSETS, file));
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // A tray app lives on with no window open.
  app.on('window-all-closed', () => {});
  app.on('second-instance', () => openDashboard());
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    // Quitting stops the gateway only if this tray started it; one started in a terminal keeps running.
    const pending = starting;
    if (!pending && !conn?.owned) return;
    event.preventDefault();
    void (async () => {
      await pending;
      if (conn?.owned) {
        status = 'stopping';
        render();
        await stopGateway(conn).catch(() => undefined);
      }
      app.exit(0);
    })();
  });

  void app.whenReady().then(() => {
    app.dock?.hide();
    tray = new Tray(trayIcon());
    render();
    setInterval(() => void tick(), POLL_MS);
    void start();
  });
}

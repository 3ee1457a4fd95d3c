/**
 * A stand-in for the few Electron APIs `desktop/src/main.ts` uses. It reports what the tray does as
 * JSON lines on stdout (renders, clipboard writes, notifications, windows) and takes commands on stdin:
 * `click <label prefix>` clicks that menu item; `quit` quits the app.
 * The dashboard window, when loaded, sends one request to `<gateway>/admin/snapshot` through the
 * session's header hook, as Chromium would for the page, and reports the status.
 */
import { createInterface } from 'node:readline';

type Listener = (...args: any[]) => unknown;
interface MenuItem {
  type?: string;
  label?: string;
  enabled?: boolean;
  click?: () => void;
}

function report(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

const appHandlers = new Map<string, Listener>();
let menu: MenuItem[] = [];
let headerHook: ((details: { url: string; requestHeaders: Record<string, string> }, cb: (r: { requestHeaders: Record<string, string> }) => void) => void) | null = null;

export const app = {
  dock: undefined as { hide(): void } | undefined,
  requestSingleInstanceLock: () => true,
  on(event: string, fn: Listener) {
    appHandlers.set(event, fn);
    return app;
  },
  whenReady: () => Promise.resolve(),
  quit() {
    let prevented = false;
    appHandlers.get('before-quit')?.({ preventDefault: () => (prevented = true) });
    if (!prevented) app.exit(0);
  },
  exit(code: number) {
    report({ type: 'exit', code });
    process.exit(code);
  },
};

export class Tray {
  title = '';
  tooltip = '';
  readonly image: unknown;
  constructor(image: unknown) {
    this.image = image;
  }
  isDestroyed() {
    return false;
  }
  setTitle(t: string) {
    this.title = t;
  }
  setToolTip(t: string) {
    this.tooltip = t;
  }
  setContextMenu(items: MenuItem[]) {
    menu = items;
    report({
      type: 'render',
      title: this.title,
      tooltip: this.tooltip,
      items: items.map((i) => (i.type === 'separator' ? '---' : `${i.click ? (i.enabled === false ? '[-] ' : '[x] ') : ''}${i.label}`)),
    });
  }
}

export const Menu = { buildFromTemplate: (items: MenuItem[]) => items };
export const clipboard = { writeText: (text: string) => report({ type: 'clipboard', text }) };
export const nativeImage = { createFromPath: (p: string) => ({ path: p }) };
export const shell = { openExternal: async (url: string) => report({ type: 'external', url }) };

export class Notification {
  static isSupported() {
    return true;
  }
  readonly opts: { title: string; body: string };
  constructor(opts: { title: string; body: string }) {
    this.opts = opts;
  }
  show() {
    report({ type: 'notification', title: this.opts.title, body: this.opts.body });
  }
}

export const session = {
  fromPartition: (partition: string) => ({
    partition,
    webRequest: {
      onBeforeSendHeaders(fn: NonNullable<typeof headerHook>) {
        headerHook = fn;
      },
    },
  }),
};

export class BrowserWindow {
  #url = '';
  webContents = {
    setWindowOpenHandler: (_fn: Listener) => {},
    on: (_event: string, _fn: Listener) => {},
    getURL: () => this.#url,
  };
  constructor(opts: { webPreferences?: { session?: { partition?: string }; nodeIntegration?: boolean; contextIsolation?: boolean } }) {
    report({ type: 'window', partition: opts.webPreferences?.session?.partition ?? null, nodeIntegration: opts.webPreferences?.nodeIntegration ?? null, contextIsolation: opts.webPreferences?.contextIsolation ?? null });
  }
  async loadURL(url: string) {
    this.#url = url;
    const admin = `${new URL(url).origin}/admin/snapshot`;
    let headers: Record<string, string> = { Accept: 'application/json' };
    if (headerHook) headerHook({ url: admin, requestHeaders: headers }, (r) => (headers = r.requestHeaders));
    const res = await fetch(admin, { headers });
    report({ type: 'load', url, adminStatus: res.status, injected: 'Authorization' in headers });
  }
  on(_event: string, _fn: Listener) {}
  isDestroyed() {
    return false;
  }
  show() {}
  focus() {}
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, ...rest] = line.trim().split(' ');
  if (cmd === 'quit') return app.quit();
  if (cmd === 'click') {
    const prefix = rest.join(' ');
    const item = menu.find((i) => i.label?.startsWith(prefix));
    if (!item?.click || item.enabled === false) return report({ type: 'error', message: `no enabled menu item "${prefix}"` });
    item.click();
  }
});

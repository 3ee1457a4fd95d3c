/**
 * Serves the dashboard page under `/ui`: the files of `core/ui/static/` (read once, on first use) and
 * React as one ES module (`/ui/vendor/react.js`, see react-vendor.ts). Only names in that fixed table
 * are served, so no path can reach another file. The page holds no secret: it asks for the admin token
 * and calls the admin API with it, same origin. The server's Host and Origin checks run before this.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError, notFound } from '../errors.ts';
import { sendError } from '../gateway/respond.ts';
import { buildReactVendor } from './react-vendor.ts';

export type UiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

export interface UiHandlerOptions {
  /** The folder with index.html, app.js, style.css; defaults to `core/ui/static`. */
  staticDir?: string;
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export const CONTENT_SECURITY_POLICY = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * The static folder beside this file; from a bundle (`.start-bundle/<build>/` in the checkout, `dist/start/` in
 * the package) or tsc's `dist/core/ui/`, the one in the package's `core/`.
 */
function defaultStaticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.join(here, 'static');
  if (existsSync(beside)) return beside;
  const fromBundle = path.resolve(here, '../../core/ui/static');
  if (existsSync(fromBundle)) return fromBundle;
  return path.resolve(here, '../../../core/ui/static');
}

const etagOf = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** URL path → asset, for every regular file of a known type directly in `dir`. */
function loadStatic(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[path.extname(name).toLowerCase()];
    const file = path.join(dir, name);
    if (!type || !/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.') || !statSync(file).isFile()) continue;
    const body = readFileSync(file);
    assets.set(`/ui/${name}`, { body, type, etag: etagOf(body) });
  }
  const index = assets.get('/ui/index.html');
  if (index) {
    assets.set('/ui', index);
    assets.set('/ui/', index);
  }
  return assets;
}

export function createUiHandler(options: UiHandlerOptions = {}): UiHandler {
  const staticDir = options.staticDir ?? defaultStaticDir();
  let assets: Map<string, Asset> | null = null;
  let vendor: Asset | null = null;

  const lookup = (urlPath: string): Asset | undefined => {
    if (urlPath === '/ui/vendor/react.js') {
      if (!vendor) {
        const v = buildReactVendor();
        vendor = { body: v.body, type: CONTENT_TYPES['.js'], etag: v.etag };
      }
      return vendor;
    }
    assets ??= loadStatic(staticDir);
    return assets.get(urlPath);
  };

  return async (req, res, urlPath) => {
    req.resume();
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      sendError(res, new GatewayError({ status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: `${method} is not supported on ${urlPath}.` }), { ...SECURITY_HEADERS, allow: 'GET, HEAD' });
      return;
    }
    const asset = lookup(urlPath);
    if (!asset) {
      sendError(res, notFound(`No dashboard file at ${urlPath}. The dashboard is at /ui.`), { ...SECURITY_HEADERS });
      return;
    }
    const headers: Record<string, string | number> = {
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      'cache-control': 'no-cache',
      etag: asset.etag,
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    headers['content-length'] = asset.body.length;
    res.writeHead(200, headers);
    res.end(method === 'HEAD' ? undefined : asset.body);
  };
}

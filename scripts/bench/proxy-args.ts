/**
 * What the two pass-through proxies (lean-proxy.ts, bare-proxy.ts) share: their command line
 * (`--port N --target URL`) and the end-to-end headers they forward (hop-by-hop ones dropped).
 */
import type { IncomingHttpHeaders } from 'node:http';

const argOf = (name: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1 || !process.argv[i + 1]) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};

/** The port to listen on and the upstream origin (no trailing slash). */
export function proxyArgs(): { port: number; target: string } {
  return { port: Number(argOf('port')), target: argOf('target').replace(/\/$/, '') };
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

export function endToEnd(h: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  return out;
}

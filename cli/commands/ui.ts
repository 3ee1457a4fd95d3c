/**
 * `gateway ui`: opens the dashboard of the running gateway in the browser, already signed in, through a
 * one-time link (a code valid once, for a minute, traded by the page for a session; see
 * core/admin/login-codes.ts). When no browser can be opened (a server, SSH), it prints the link.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { dataPaths } from '../../core/home.ts';
import { readServerState } from '../../core/server-state.ts';
import { CliError } from '../cli-error.ts';
import { dataHome, note, out, printJson } from '../context.ts';

export interface LoginLink {
  url: string;
  expires_at: string;
}

/** Asks the gateway at `origin` (with the admin token) for a one-time sign-in link to its dashboard. */
export async function loginLink(origin: string, adminToken: string, ttlSeconds?: number): Promise<LoginLink> {
  const res = await fetch(`${origin}/admin/login-codes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: ttlSeconds === undefined ? '' : JSON.stringify({ ttl_seconds: ttlSeconds }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json().catch(() => null)) as { path?: string; expires_at?: string; error?: { message?: string } } | null;
  if (res.status !== 201 || !body?.path) throw new CliError(`The gateway refused a sign-in link: ${body?.error?.message ?? `HTTP ${res.status}`}`);
  return { url: `${origin}${body.path}`, expires_at: body.expires_at ?? '' };
}

/** The platform's "open this URL" command, or null where none is expected to work (Linux without a display). */
function opener(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): [string, string[]] | null {
  if (platform === 'darwin') return ['open', []];
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return ['xdg-open', []];
}

/** Resolves true once the opener ran and exited 0 (the browser itself may take longer). */
function openInBrowser(url: string): Promise<boolean> {
  const cmd = opener();
  if (!cmd) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd[0], [...cmd[1], url], { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('exit', (code) => resolve(code === 0));
      child.unref();
    } catch {
      resolve(false);
    }
  });
}

export function registerUi(program: Command): void {
  program
    .command('ui')
    .description('open the dashboard in the browser, signed in (a one-time link)')
    .option('--print', 'print the link instead of opening a browser')
    .option('--json', 'print the link as JSON')
    .action(async (opts: { print?: boolean; json?: boolean }) => {
      const home = dataHome();
      const state = readServerState(home);
      if (!state) throw new CliError('No gateway is running on this data home; start one with `gateway start`.');
      const adminToken = readFileSync(dataPaths(home).adminToken, 'utf8').trim();
      const link = await loginLink(state.url, adminToken);
      if (opts.json) return printJson(link);
      if (!opts.print && (await openInBrowser(link.url))) {
        note('Opened the dashboard in your browser. The link works once, within a minute.');
        return;
      }
      if (!opts.print) note('Could not open a browser here; open this link (it works once, within a minute):');
      out(link.url);
    });
}

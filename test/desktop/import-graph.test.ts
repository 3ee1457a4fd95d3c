/**
 * What the tray loads inside Electron's main process: Electron's Node has its own native ABI, so
 * nothing reachable from desktop/src may load a native module built for the pinned Node
 * (`better-sqlite3`, `@napi-rs/keyring`), nor the terminal UI's React. And only main.ts imports
 * `electron`, so everything else runs (and is tested) under plain Node.
 * And the tray uses the core only through its public entry point: the package `gateway-local`
 * (core/index.ts), never a `cli/` file or another core file by path.
 * A static walk of value imports (`import type` is erased), following relative `.ts` paths and the
 * core's package name to its entry point.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const DESKTOP_SRC = path.join(REPO_ROOT, 'desktop', 'src');
const CORE_ENTRY = path.join(REPO_ROOT, 'core', 'index.ts');

function valueImports(source: string): string[] {
  const out: string[] = [];
  const fromRe = /^\s*(import|export)\s+(type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(fromRe)) if (!m[2]) out.push(m[3]);
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) out.push(m[1]);
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]);
  return out;
}

/** Every module specifier a file names, `import type` included (a type import by path is still a reach into internals). */
function valueAndTypeImports(source: string): string[] {
  return [...source.matchAll(/^\s*(?:import|export)\s[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

/** Every file reachable from `entry`, and the packages each imports. */
function walk(entries: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    const packages: string[] = [];
    seen.set(file, packages);
    for (const spec of valueImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec));
      else if (spec === 'gateway-local') {
        packages.push(spec);
        queue.push(CORE_ENTRY);
      } else packages.push(spec);
    }
  }
  return seen;
}

describe('desktop import graph', () => {
  const entries = readdirSync(DESKTOP_SRC).filter((f) => f.endsWith('.ts')).map((f) => path.join(DESKTOP_SRC, f));
  const graph = walk(entries);

  it('reaches no native module and no React', () => {
    const bad = [...graph].flatMap(([file, pkgs]) => pkgs.filter((p) => /^(better-sqlite3|@napi-rs\/keyring|ink|react)(\/|$)/.test(p)).map((p) => `${path.relative(REPO_ROOT, file)} -> ${p}`));
    expect(bad).toEqual([]);
    expect([...graph.keys()].map((f) => path.relative(REPO_ROOT, f)).filter((f) => f.startsWith(`core${path.sep}storage`))).toEqual([]);
  });

  it('imports electron from main.ts only', () => {
    const users = [...graph].filter(([, pkgs]) => pkgs.includes('electron')).map(([f]) => path.relative(REPO_ROOT, f));
    expect(users).toEqual([path.join('desktop', 'src', 'main.ts')]);
  });

  it('uses the core only through its public entry point, and nothing of cli/', () => {
    const desktopFiles = [...graph.keys()].filter((f) => f.startsWith(DESKTOP_SRC + path.sep));
    const outside = desktopFiles.flatMap((file) =>
      valueAndTypeImports(readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(DESKTOP_SRC + path.sep))
        .map((spec) => `${path.relative(REPO_ROOT, file)} -> ${spec}`),
    );
    expect(outside).toEqual([]);
    expect([...graph.keys()].map((f) => path.relative(REPO_ROOT, f)).filter((f) => f.startsWith(`cli${path.sep}`))).toEqual([]);
    // The name resolves to that entry point for Node too (the package's `exports`).
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string> };
    expect(pkg.name).toBe('gateway-local');
    expect(path.resolve(REPO_ROOT, pkg.exports['.'])).toBe(CORE_ENTRY);
  });

  it('the walk sees the imports it should (it is not vacuous)', () => {
    const files = [...graph.keys()].map((f) => path.relative(REPO_ROOT, f));
    expect(files).toContain(path.join('core', 'index.ts'));
    expect(files).toContain(path.join('core', 'server-state.ts'));
    expect(files).toContain(path.join('core', 'admin', 'admin-client.ts'));
    expect(graph.get(path.join(DESKTOP_SRC, 'gateway-process.ts'))).toContain('gateway-local');
  });
});

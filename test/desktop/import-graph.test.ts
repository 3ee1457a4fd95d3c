/**
 * What the tray loads inside Electron's main process: Electron's Node has its own native ABI, so
 * nothing reachable from desktop/src may load a native module built for the pinned Node
 * (`better-sqlite3`, `@napi-rs/keyring`), nor the terminal UI's React. And only main.ts imports
 * `electron`, so everything else runs (and is tested) under plain Node.
 * A static walk of value imports (`import type` is erased), following relative `.ts` paths.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const DESKTOP_SRC = path.join(REPO_ROOT, 'desktop', 'src');

function valueImports(source: string): string[] {
  const out: string[] = [];
  const fromRe = /^\s*(import|export)\s+(type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(fromRe)) if (!m[2]) out.push(m[3]);
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) out.push(m[1]);
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]);
  return out;
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
      else packages.push(spec);
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

  it('the walk sees the imports it should (it is not vacuous)', () => {
    const files = [...graph.keys()].map((f) => path.relative(REPO_ROOT, f));
    expect(files).toContain(path.join('cli', 'tui', 'admin-client.ts'));
    expect(files).toContain(path.join('core', 'server-state.ts'));
    expect(graph.get(path.join(REPO_ROOT, 'cli', 'tui', 'admin-client.ts'))).toContain('undici');
  });
});

/**
 * No import cycles in core/: a reader (and the module loader) can take each concept on its own. A static
 * walk of every relative import (`import type` included: a type-only cycle is still a tangle of concepts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.ts';

const CORE = path.join(REPO_ROOT, 'core');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'static' || name === 'node_modules' ? [] : files(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"](\.[^'"]+)['"]/gm)) out.push(path.resolve(path.dirname(file), m[1]));
  for (const m of src.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(path.resolve(path.dirname(file), m[1]));
  return out.filter((p) => p.startsWith(CORE + path.sep));
}

/** Each cycle once, as a list of files relative to the repo. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') found.push(stack.slice(stack.indexOf(g)).map((x) => path.relative(REPO_ROOT, x)));
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('core import graph', () => {
  const graph = new Map(files(CORE).map((f) => [f, imports(f)]));

  it('has no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('the walk is not vacuous: it sees the pipeline and finds a cycle when there is one', () => {
    expect(graph.get(path.join(CORE, 'pipeline', 'run-call.ts'))).toContain(path.join(CORE, 'gateway', 'admission.ts'));
    const a = path.join(CORE, 'a.ts');
    const b = path.join(CORE, 'b.ts');
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual([['core/a.ts', 'core/b.ts']]);
  });
});

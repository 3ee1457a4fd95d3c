// The checkout's start bundle: the CLI's TypeScript modules and zod built into ~30 JavaScript chunks by
// `npm run bundle` (run by `npm ci`), so a start loads ~75 modules instead of ~350 (measured: 267 → 178 ms to
// the first answer). Only a bundle built from exactly the sources on disk is used; after any edit the
// sources run, as before. Plain JavaScript: bin/gateway.js reads it before anything else loads.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const BUNDLE_DIR = '.start-bundle';
export const CURRENT_FILE = 'current.json';

/**
 * What a build records of one input: its path from the checkout's root, mtime (ms) and size. A file edited,
 * added to the import graph, or deleted changes an entry or the list, and the bundle is not used.
 */
export function fileStamp(root, rel) {
  const st = statSync(path.join(root, rel));
  return [rel, Math.trunc(st.mtimeMs), st.size];
}

/** The bundle's entry point when it was built from the sources as they are now, else null. */
export function freshStartBundle(root) {
  try {
    const dir = path.join(root, BUNDLE_DIR);
    const current = JSON.parse(readFileSync(path.join(dir, CURRENT_FILE), 'utf8'));
    const build = path.join(dir, current.build);
    const manifest = JSON.parse(readFileSync(path.join(build, 'manifest.json'), 'utf8'));
    for (const [rel, mtime, size] of manifest.inputs) {
      const [, m, s] = fileStamp(root, rel);
      if (m !== mtime || s !== size) return null;
    }
    return path.join(build, manifest.entry);
  } catch {
    // No bundle, a partial one, or an input gone: the sources it is.
    return null;
  }
}

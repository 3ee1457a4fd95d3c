/**
 * The package.json a packed package ships, for `npm pack` / `npm publish` (`prepack` → `pack`, `postpack`
 * → `restore`). The checkout's manifest points `exports["."]` at `core/index.ts` and builds its start bundle in
 * `prepare`; the package ships neither `core/*.ts` nor `scripts/`, so it gets `dist/core/index.js` (the library
 * entry point tsc builds) and no `prepare` (npm warned about that install script at every install). npm packs
 * the manifest as it is on disk once `prepack` has run; `restore` puts the checkout's back.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = path.join(root, 'package.json');
const saved = path.join(root, '.package.json.before-pack');

type Manifest = { exports: Record<string, string>; scripts: Record<string, string> };

/** The manifest as packed: what the checkout's says, for the files the package has. */
export function packedManifest(checkout: Manifest): Manifest {
  const scripts = { ...checkout.scripts };
  delete scripts.prepare;
  return { ...checkout, exports: { ...checkout.exports, '.': './dist/core/index.js' }, scripts };
}

function main(mode: string | undefined): void {
  if (mode === 'pack') {
    // A backup left by a pack that failed half-way is the checkout's manifest: keep it, do not overwrite it.
    if (!existsSync(saved)) writeFileSync(saved, readFileSync(manifest));
    const checkout = JSON.parse(readFileSync(saved, 'utf8')) as Manifest;
    if (!existsSync(path.join(root, 'dist', 'core', 'index.js'))) throw new Error('dist/core/index.js is missing: run `npm run build` first');
    writeFileSync(manifest, `${JSON.stringify(packedManifest(checkout), null, 2)}\n`);
  } else if (mode === 'restore') {
    if (existsSync(saved)) renameSync(saved, manifest);
  } else {
    process.stderr.write('usage: node scripts/pack-manifest.ts pack|restore\n');
    process.exit(2);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv[2]);

/**
 * `npm run bundle` (and `npm ci`, through `prepare`): builds the checkout's start bundle (bin/start-bundle.js
 * says why and when it is used). `--package` (part of `npm run build`) builds the same into `dist/start/` for the
 * published package, whose bin runs it (no freshness check there: a package's files do not change).
 * Entries: the CLI and the three worker threads, which find each other by name in one flat folder, as they do
 * beside each other in the sources. Packages stay outside the bundle and load from node_modules as before
 * (native modules, undici's internals reached by path, the UI's React), except zod: its ~95 modules are most of
 * the packages' share of a start. Both folders sit two levels below the package's root, where the code that
 * finds `package.json` and the UI's static files looks.
 *
 * Each checkout build goes to a folder of its own and `current.json` then points at it: a gateway already
 * running from an older build still finds the chunks it loads later (the admin API, the audit thread). The
 * last few builds are kept.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { BUNDLE_DIR, CURRENT_FILE, fileStamp } from '../bin/start-bundle.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KEEP_BUILDS = 3;

const ENTRIES = {
  main: 'cli/main.ts',
  'audit-thread': 'core/storage/audit-thread.ts',
  'read-thread': 'core/storage/read-thread.ts',
  'tokenizer-thread': 'core/gateway/tokenizer-thread.ts',
};

/** Bare imports stay external (loaded from node_modules at run time), but zod is bundled. */
const external = (id: string): boolean => id.startsWith('node:') || (!id.startsWith('.') && !path.isAbsolute(id) && id !== 'zod' && !id.startsWith('zod/'));

/** Also read by every start: a changed dependency, Node pin or this script makes the bundle stale. */
const ALSO_STALE_WITH = ['package.json', 'package-lock.json', 'scripts/build-start-bundle.ts', 'bin/start-bundle.js'];

/** The bundle into `dir` (emptied first); the build's output, for the modules it holds. Source maps for the checkout only. */
async function bundleInto(root: string, dir: string, sourcemap: boolean) {
  rmSync(dir, { recursive: true, force: true });
  return build({
    cwd: root,
    input: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(root, file)])),
    platform: 'node',
    external,
    logLevel: 'warn',
    output: { dir, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js', sourcemap },
  });
}

/** The published package's bundle, `dist/start/main.js` (after `tsc` wrote the rest of dist/). */
export async function buildPackageBundle(root = ROOT): Promise<string> {
  const dir = path.join(root, 'dist', 'start');
  await bundleInto(root, dir, false);
  return dir;
}

export async function buildStartBundle(root = ROOT): Promise<string> {
  const base = path.join(root, BUNDLE_DIR);
  mkdirSync(base, { recursive: true });
  const staging = path.join(base, `.staging-${process.pid}`);
  const out = await bundleInto(root, staging, true);
  const modules = new Set<string>();
  for (const chunk of out.output) if (chunk.type === 'chunk') for (const id of chunk.moduleIds) modules.add(id);
  const inputs = [...modules]
    .filter((id) => path.isAbsolute(id) && !id.includes(`${path.sep}node_modules${path.sep}`))
    .map((id) => path.relative(root, id))
    .concat(ALSO_STALE_WITH)
    .sort()
    .map((rel) => fileStamp(root, rel));
  const manifest = { entry: 'main.js', inputs };
  writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest)}\n`);

  const id = createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 12);
  const dest = path.join(base, id);
  // The same inputs built the same bundle: keep the one in place (a gateway may be running from it).
  if (existsSync(path.join(dest, 'manifest.json'))) rmSync(staging, { recursive: true, force: true });
  else {
    rmSync(dest, { recursive: true, force: true });
    renameSync(staging, dest);
  }
  // Written whole, then renamed: a start reading it never sees half a file.
  const pointer = path.join(base, `.${CURRENT_FILE}-${process.pid}`);
  writeFileSync(pointer, `${JSON.stringify({ build: id })}\n`);
  renameSync(pointer, path.join(base, CURRENT_FILE));
  pruneOldBuilds(base, id);
  return dest;
}

const ABANDONED_STAGING_MS = 10 * 60_000;

function pruneOldBuilds(base: string, keep: string): void {
  // A build that died half-way left its staging folder behind.
  for (const d of readdirSync(base, { withFileTypes: true })) {
    const p = path.join(base, d.name);
    if (d.isDirectory() && d.name.startsWith('.staging-') && Date.now() - statSync(p).mtimeMs > ABANDONED_STAGING_MS) rmSync(p, { recursive: true, force: true });
  }
  const builds = readdirSync(base, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.') && d.name !== keep)
    .map((d) => ({ name: d.name, at: statSync(path.join(base, d.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of builds.slice(KEEP_BUILDS - 1)) rmSync(path.join(base, old.name), { recursive: true, force: true });
}

if (import.meta.main) {
  const dir = process.argv.includes('--package') ? await buildPackageBundle() : await buildStartBundle();
  process.stdout.write(`start bundle: ${path.relative(ROOT, dir)}\n`);
}

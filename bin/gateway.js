#!/usr/bin/env node
// The `gateway` entry point. Plain JavaScript so it runs on any Node and can refuse old ones with a
// clear message before a native module (better-sqlite3 13 crashes outright on Node 20) is loaded.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `gateway needs Node.js 22.18 or newer; this is Node ${process.versions.node}.\n` +
      'Inside the checkout, `npm ci` installs the pinned Node 24 and `npx gateway ...` uses it.\n',
  );
  process.exit(1);
}

// Inside the checkout, run the TypeScript sources (Node strips the types); an installed package runs dist/.
const source = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const built = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const useSource = existsSync(source) && !source.includes('/node_modules/');
const entry = useSource || !existsSync(built) ? source : built;
const { main } = await import(pathToFileURL(entry).href);
await main(process.argv);

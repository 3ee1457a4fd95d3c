/**
 * React for the dashboard page without a bundler. React 19 ships no UMD or browser ESM build, only
 * CommonJS (`cjs/*.production.js`, which need nothing from Node: no `process.env`, no other requires
 * than each other). This wraps the four production files in a tiny CommonJS loader and serves the
 * result as one ES module that exports `React` and `ReactDOMClient`. Built once, on first request.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface VendorModule {
  body: Buffer;
  etag: string;
  version: string;
}

/** The module name each file answers to, the package it lives in and its path there. */
const FILES: ReadonlyArray<readonly [name: string, pkg: string, file: string]> = [
  ['scheduler', 'scheduler', 'cjs/scheduler.production.js'],
  ['react', 'react', 'cjs/react.production.js'],
  ['react-dom', 'react-dom', 'cjs/react-dom.production.js'],
  ['react-dom/client', 'react-dom', 'cjs/react-dom-client.production.js'],
];

/** Each package's folder, resolved the way Node would (scheduler from react-dom's own location). */
function packageDirs(): Record<string, string> {
  const here = createRequire(import.meta.url);
  const reactDom = here.resolve('react-dom');
  const fromDom = createRequire(reactDom);
  return {
    react: path.dirname(fromDom.resolve('react')),
    'react-dom': path.dirname(reactDom),
    scheduler: path.dirname(fromDom.resolve('scheduler')),
  };
}

export function buildReactVendor(): VendorModule {
  const dirs = packageDirs();
  const version = (JSON.parse(readFileSync(path.join(dirs.react, 'package.json'), 'utf8')) as { version: string }).version;
  const parts: string[] = [
    `// React ${version} and ReactDOM production builds (MIT licence, (c) Meta Platforms, Inc. and affiliates),`,
    '// copied from node_modules by the gateway and wrapped in a minimal CommonJS loader.',
    'const defs = Object.create(null);',
  ];
  for (const [name, pkg, file] of FILES) {
    const source = readFileSync(path.join(dirs[pkg], file), 'utf8').replace(/^\/\/# sourceMappingURL=.*$/gm, '');
    parts.push(`defs[${JSON.stringify(name)}] = function (module, exports, require) {\n${source}\n};`);
  }
  parts.push(
    'const cache = Object.create(null);',
    'function require(name) {',
    '  const hit = cache[name];',
    '  if (hit) return hit.exports;',
    '  const def = defs[name];',
    "  if (!def) throw new Error('react vendor: unknown module ' + name);",
    '  const module = { exports: {} };',
    '  cache[name] = module;',
    '  def.call(module.exports, module, module.exports, require);',
    '  return module.exports;',
    '}',
    "export const React = require('react');",
    "export const ReactDOMClient = require('react-dom/client');",
    'export default React;',
    '',
  );
  const body = Buffer.from(parts.join('\n'), 'utf8');
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, version };
}

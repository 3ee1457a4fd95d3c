/**
 * Runs `@portkey-ai/gateway` (its published Node build, from node_modules) in this process, on the
 * port given, headless (no log UI), and exits when the parent's stdin pipe closes or on SIGTERM.
 *
 * `node portkey-child.ts --port N`.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const i = process.argv.indexOf('--port');
const port = Number(process.argv[i + 1]);
if (i === -1 || !Number.isInteger(port) || port <= 0) throw new Error('--port N is required');

const require = createRequire(import.meta.url);
const entry = path.join(path.dirname(require.resolve('@portkey-ai/gateway/package.json')), 'build', 'start-server.js');

// Portkey 1.15.2 with @hono/node-server > 1.14.2 (npm installs 1.19.x) answers every stream with a 500:
// it appends headers to the upstream fetch() Response, whose headers are immutable (Portkey-AI/gateway
// issues #1389 and #1550). Its own fix (PR #1551) re-wraps streaming responses in a new Response before
// touching the headers; do the same here, for event streams only, so non-stream calls run untouched.
const upstreamFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await upstreamFetch(input, init);
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
};

// start-server.js reads its options from argv when it is evaluated.
process.argv = [process.argv[0], entry, `--port=${port}`, '--headless'];
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
await import(pathToFileURL(entry).href);

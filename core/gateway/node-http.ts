/**
 * node:http loaded with `require`, not `import`: the ESM view of a built-in module reads every export once,
 * and node:http's lazy `WebSocket`, `CloseEvent` and `MessageEvent` getters then load Node's bundled undici
 * (fetch, WebSocket) for classes the gateway never uses: +13 MiB of RSS at every start (measured, Node 24).
 * Every runtime use of node:http goes through here; `import type` from node:http costs nothing.
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, IncomingMessage } = http;

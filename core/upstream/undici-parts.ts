/**
 * The three parts of undici the transport uses (Agent, Pool and the request API), loaded from their own
 * files. undici's index also loads fetch, WebSocket, the HTTP cache, the mock and proxy agents: measured
 * on Node 24, importing it costs ~90 ms and ~28 MiB of RSS at every start, these three half of that. When a
 * release moves them (undici has no exports map, so nothing promises these paths), the index is used.
 */
import { createRequire } from 'node:module';
import type { Agent, Dispatcher, Pool } from 'undici';

export interface UndiciParts {
  Agent: typeof Agent;
  Pool: typeof Pool;
  /** undici's `Dispatcher.request`, called with the dispatcher as `this`: no URL parsing of its own. */
  request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
}

const require = createRequire(import.meta.url);

function loadParts(): UndiciParts {
  try {
    return {
      Agent: require('undici/lib/dispatcher/agent.js') as typeof Agent,
      Pool: require('undici/lib/dispatcher/pool.js') as typeof Pool,
      request: (require('undici/lib/api/index.js') as Pick<UndiciParts, 'request'>).request,
    };
  } catch {
    const undici = require('undici') as typeof import('undici');
    return { Agent: undici.Agent, Pool: undici.Pool, request: undici.Dispatcher.prototype.request as UndiciParts['request'] };
  }
}

export const undiciParts: UndiciParts = loadParts();

/**
 * The two parts of undici the transport uses (Agent and Pool; it dispatches with a handler of its own,
 * dispatch-handler.ts), loaded from their own files. undici's index also loads fetch, WebSocket, the HTTP
 * cache, the mock and proxy agents and the request API: measured on Node 24, importing it costs ~90 ms and
 * ~28 MiB of RSS at every start. When a release moves these files (undici has no exports map, so nothing
 * promises these paths), the index is used.
 */
import { createRequire } from 'node:module';
import type { Agent, Pool } from 'undici';

export interface UndiciParts {
  Agent: typeof Agent;
  Pool: typeof Pool;
}

const require = createRequire(import.meta.url);

function loadParts(): UndiciParts {
  try {
    return {
      Agent: require('undici/lib/dispatcher/agent.js') as typeof Agent,
      Pool: require('undici/lib/dispatcher/pool.js') as typeof Pool,
    };
  } catch {
    const undici = require('undici') as typeof import('undici');
    return { Agent: undici.Agent, Pool: undici.Pool };
  }
}

export const undiciParts: UndiciParts = loadParts();

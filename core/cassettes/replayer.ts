/**
 * Writes a recorded answer back to a client: the recorded status and headers, marked as a replay with
 * the original cost (`x-gateway-replayed: true`, `x-gateway-cost-usd`), and the body as recorded; a
 * stream chunk by chunk, each write its own, as the gateway wrote it the first time.
 */
import type { ServerResponse } from 'node:http';
import { formatUsd } from '../pricing/cost.ts';
import type { AbortWatch } from '../upstream/abort-watch.ts';
import { chunkBytes, interactionBody } from './format.ts';
import type { Interaction } from './format.ts';

const REPLAYED_HEADER = 'x-gateway-replayed';

function replayHeaders(i: Interaction, extra: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { ...i.headers, ...extra, [REPLAYED_HEADER]: 'true' };
  if (i.cost_usd !== null && headers['x-gateway-cost-usd'] === undefined) headers['x-gateway-cost-usd'] = formatUsd(i.cost_usd);
  return headers;
}

/**
 * Resolves true when the whole answer was written; false when the client left or `signal` stopped it
 * (a stopping gateway cutting the call) before the end.
 */
export async function writeReplay(res: ServerResponse, i: Interaction, extra: Record<string, string>, signal?: AbortWatch): Promise<boolean> {
  const headers = replayHeaders(i, extra);
  if (i.chunks === undefined) {
    const body = interactionBody(i);
    res.writeHead(i.status, { ...headers, 'content-length': String(body.length) });
    res.end(body);
    return true;
  }
  res.writeHead(i.status, headers);
  res.flushHeaders();
  for (const c of i.chunks) {
    if (res.destroyed || signal?.aborted) return false;
    // A turn of the event loop between writes so each chunk leaves as its own write, not one coalesced blob.
    if (!res.write(chunkBytes(c))) {
      // A stopping gateway cuts a replay whose client is not reading: waiting for 'drain' alone would hold
      // the call (and its audit row) past the store's close.
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (res.destroyed || signal?.aborted) return false;
  res.end();
  return true;
}

/**
 * Follows the admin event stream (`GET /admin/events`) of a running gateway: one `call` event per
 * audit row. The dashboard feeds its request list from it; without a dashboard (no TTY, or the
 * dashboard failed) it prints one plain line per call.
 */
import { request } from 'undici';
import { SseParser } from '../../core/upstream/sse-parser.ts';
import type { CallJson } from '../../core/call-json.ts';
import { out } from '../context.ts';
import { formatCallLine } from '../commands/logs.ts';
import { adminError } from './admin-client.ts';
import type { AdminEndpoint } from './admin-client.ts';

/**
 * Resolves once the stream is open (rejects when it cannot be opened, e.g. refused or a bad token);
 * returns the function that closes it. `onEnd` runs when the stream ends or breaks on its own, never
 * after that function was called.
 */
export async function followCalls(
  opts: AdminEndpoint,
  onCall: (c: CallJson) => void = (c) => out(formatCallLine(c)),
  onEnd?: (err: Error | null) => void,
): Promise<() => void> {
  const ac = new AbortController();
  const res = await request(`${opts.adminUrl}/admin/events`, {
    headers: { authorization: `Bearer ${opts.adminToken}` },
    signal: ac.signal,
    headersTimeout: 10_000,
    bodyTimeout: 0,
  });
  if (res.statusCode !== 200) throw await adminError(res.statusCode, res.body);
  const parser = new SseParser();
  void (async () => {
    let failure: Error | null = null;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        for (const ev of parser.push(chunk)) {
          if (ev.event !== 'call') continue;
          let call: CallJson;
          try {
            call = JSON.parse(ev.data) as CallJson;
          } catch {
            continue; // one unreadable event must not end the stream
          }
          onCall(call);
        }
      }
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
    if (!ac.signal.aborted) onEnd?.(failure);
  })();
  return () => ac.abort();
}

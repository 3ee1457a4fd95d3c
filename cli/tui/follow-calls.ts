/** Follows the admin event stream of a running gateway and prints one line per call. */
import { request } from 'undici';
import { SseParser } from '../../core/upstream/sse-parser.ts';
import type { CallJson } from '../../core/call-json.ts';
import { out } from '../context.ts';
import { formatCallLine } from '../commands/logs.ts';
import type { DashboardOptions } from './run-dashboard.ts';

export async function followCalls(opts: DashboardOptions, onCall: (c: CallJson) => void = (c) => out(formatCallLine(c))): Promise<() => void> {
  const ac = new AbortController();
  const res = await request(`${opts.adminUrl}/admin/events`, { headers: { authorization: `Bearer ${opts.adminToken}` }, signal: ac.signal, bodyTimeout: 0 });
  const parser = new SseParser();
  void (async () => {
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        for (const ev of parser.push(chunk)) if (ev.event === 'call') onCall(JSON.parse(ev.data) as CallJson);
      }
    } catch {
      /* stopped */
    }
  })();
  return () => ac.abort();
}

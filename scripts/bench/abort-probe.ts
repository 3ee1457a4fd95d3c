/**
 * Clients that leave mid-request, against a pass-through proxy: one leaves mid-upload (headers and part of a
 * body, then a reset), one leaves mid-stream (after the first event of a slow stream from the fake upstream's
 * `/slow` paths). Afterwards the proxy must still answer its health route, and the upstream must have seen
 * its stream cut (the proxy aborted the upstream call instead of reading it to the end for nobody).
 */
import { connect } from 'node:net';
import { request } from 'undici';
import { SLOW_PREFIX, STREAM_BODY, sleep } from './common.ts';
import { statsDelta, upstreamStats } from './context.ts';
import type { BenchContext } from './context.ts';
import type { TargetResult } from './results.ts';

function leaveMidUpload(port: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"model":"bench-model","messages":[`,
      );
      setTimeout(() => {
        socket.resetAndDestroy();
        resolve();
      }, 50);
    });
    socket.on('error', () => resolve());
  });
}

async function leaveMidStream(origin: string): Promise<void> {
  const ac = new AbortController();
  const res = await request(`${origin}${SLOW_PREFIX}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: STREAM_BODY,
    signal: ac.signal,
  });
  res.body.on('error', () => undefined);
  for await (const _chunk of res.body) break; // the first event, then leave (the iterator's return destroys the body)
  ac.abort();
}

export async function probeClientAbort(ctx: BenchContext, origin: string, port: number): Promise<NonNullable<TargetResult['clientAbort']>> {
  const before = await upstreamStats(ctx);
  const notes: string[] = [];
  await leaveMidUpload(port);
  try {
    await leaveMidStream(origin);
  } catch (err) {
    notes.push(`the slow stream failed before the client left: ${(err as Error).message}`);
  }
  // The slow stream lasts ~0.7 s: a proxy that does not abort lets it run to its end, uncut.
  await sleep(300);
  let survived = false;
  try {
    const res = await request(`${origin}/healthz`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
    await res.body.dump();
    survived = res.statusCode === 200;
    if (!survived) notes.push(`/healthz answered ${res.statusCode}`);
  } catch (err) {
    notes.push(`/healthz: ${(err as Error).message}`);
  }
  await sleep(700);
  const cut = statsDelta(before, await upstreamStats(ctx)).cut;
  const upstreamCut = cut > 0;
  if (!upstreamCut) notes.push('the upstream stream ran to its end after the client left');
  return { survived, upstreamCut, detail: notes.length ? notes.join('; ') : 'healthy afterwards; upstream stream cut' };
}

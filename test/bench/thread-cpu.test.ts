import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { formatThreadCpu, threadCpuMs, threadCpuPerRequest } from '../../scripts/bench/thread-cpu.ts';

const onLinux = process.platform === 'linux';

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) Math.sqrt(Math.random());
}

describe.runIf(onLinux)('the benchmark\'s CPU per thread', () => {
  it('charges a busy worker thread to the worker threads and the busy main thread to the request thread', async () => {
    const before = threadCpuMs([process.pid]);
    const worker = new Worker(
      "const { parentPort } = require('node:worker_threads'); const end = Date.now() + 300; while (Date.now() < end) Math.sqrt(Math.random()); parentPort.postMessage('done'); setInterval(() => {}, 1000);",
      { eval: true },
    );
    await new Promise((resolve) => worker.once('message', resolve));
    spin(300);
    const after = threadCpuMs([process.pid]);
    await worker.terminate();
    const split = threadCpuPerRequest(before, after, 1000);
    expect(split?.WorkerThread ?? 0).toBeGreaterThan(150);
    expect(split?.MainThread ?? 0).toBeGreaterThan(150);
    expect(Object.keys(split ?? {}).every((g) => ['MainThread', 'WorkerThread', 'V8Worker', 'libuv-worker', 'other'].includes(g))).toBe(true);
  });

  it('divides by the requests, and says nothing without any', () => {
    const a = new Map([['1/1', { group: 'MainThread' as const, ms: 10 }]]);
    const b = new Map([
      ['1/1', { group: 'MainThread' as const, ms: 30 }],
      ['1/2', { group: 'WorkerThread' as const, ms: 5 }],
    ]);
    expect(threadCpuPerRequest(a, b, 100)).toEqual({ MainThread: 200, WorkerThread: 50 });
    expect(threadCpuPerRequest(a, b, 0)).toBeNull();
    expect(threadCpuPerRequest(a, new Map(), 10)).toBeNull();
  });

  it('prints a row per measured mode with its total', () => {
    const lines = formatThreadCpu([{ label: 'lean', modes: [['non-stream', { MainThread: 60.4, V8Worker: 9.6 }], ['stream', null]] }]);
    expect(lines.find((l) => l.startsWith('| lean'))).toBe('| lean | non-stream | 60 | 0 | 10 | 0 | 0 | 70 |');
    expect(formatThreadCpu([{ label: 'x', modes: [['stream', undefined]] }])).toEqual([]);
  });
});

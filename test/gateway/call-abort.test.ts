import { expect, it, vi } from 'vitest';
import { CallAbort } from '../../core/gateway/call-abort.ts';

it('tells each listener once, in order, with the reason set; later aborts and late listeners do nothing', () => {
  const a = new CallAbort();
  const heard: string[] = [];
  const first = () => heard.push(`first ${String((a.reason as Error).name)}`);
  const second = () => heard.push('second');
  a.signal.addEventListener('abort', first, { once: true });
  a.addEventListener('abort', second);
  expect(a.signal).toBe(a);
  expect(a.aborted).toBe(false);
  a.abort();
  a.abort(new Error('again'));
  expect(a.aborted).toBe(true);
  expect(heard).toEqual(['first AbortError', 'second']);
  const late = vi.fn();
  a.addEventListener('abort', late);
  expect(late).not.toHaveBeenCalled();
});

it('a removed listener is not called; a failing one does not keep the next from hearing', async () => {
  const a = new CallAbort();
  const removed = vi.fn();
  const after = vi.fn();
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    a.addEventListener('abort', removed);
    a.addEventListener('abort', () => {
      throw new Error('boom');
    });
    a.addEventListener('abort', after);
    a.removeEventListener('abort', removed);
    a.removeEventListener('abort', () => undefined);
    const reason = new Error('client left');
    a.abort(reason);
    expect(a.reason).toBe(reason);
    expect(removed).not.toHaveBeenCalled();
    expect(after).toHaveBeenCalledOnce();
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([expect.stringMatching(/an abort listener failed: Error: boom/)]);
  } finally {
    process.off('warning', onWarning);
  }
});

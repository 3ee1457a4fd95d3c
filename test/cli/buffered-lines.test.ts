import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bufferedLines } from '../../cli/buffered-lines.ts';

function sink(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      writes.push(chunk.toString());
      cb();
    },
  });
  return { stream, writes };
}

describe('bufferedLines', () => {
  it('writes the lines of a burst in one write, in order', async () => {
    const { stream, writes } = sink();
    const w = bufferedLines(stream);
    w.line('a');
    w.line('b');
    w.line('c');
    expect(writes).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(writes).toEqual(['a\nb\nc\n']);
  });

  it('flush() writes what is held at once, and nothing twice', async () => {
    const { stream, writes } = sink();
    const w = bufferedLines(stream);
    w.line('x');
    w.flush();
    expect(writes).toEqual(['x\n']);
    await new Promise((r) => setTimeout(r, 50));
    w.flush();
    expect(writes).toEqual(['x\n']);
  });

  it('keeps UTF-8 whole and lines in order across batches, and writes a line larger than a batch alone', () => {
    const { stream, writes } = sink();
    const w = bufferedLines(stream);
    const lines = Array.from({ length: 1_500 }, (_, i) => `${i} fast → openai/gpt-4o-mini clé ✓ ${'x'.repeat(i % 90)}`);
    for (const l of lines) w.line(l);
    const huge = `big ${'é'.repeat(40_000)}`;
    w.line(huge);
    w.line('after');
    w.flush();
    // More than one batch went out, none above its size, and together they are every line, in order.
    expect(writes.length).toBeGreaterThan(2);
    expect(writes.join('')).toBe(`${lines.join('\n')}\n${huge}\nafter\n`);
    expect(writes).toContain(`${huge}\n`);
    for (const w of writes) if (w !== `${huge}\n`) expect(Buffer.byteLength(w)).toBeLessThanOrEqual(64 * 1024);
  });

  it('writes a line given in pieces as the pieces joined, in order with whole lines, within and beyond a batch', () => {
    const { stream, writes } = sink();
    const w = bufferedLines(stream);
    const pieces = Array.from({ length: 1_500 }, (_, i) => [`${i} fast`, ' → ', `openai/gpt-4o-mini clé ${'x'.repeat(i % 90)}`]);
    for (const [i, p] of pieces.entries()) w.line(i % 3 === 0 ? p.join('') : p);
    const huge = ['big ', '→'.repeat(30_000)];
    w.line(huge);
    w.line(['after']);
    w.flush();
    expect(writes.length).toBeGreaterThan(2);
    expect(writes.join('')).toBe(`${pieces.map((p) => p.join('')).join('\n')}\n${huge.join('')}\nafter\n`);
  });
});

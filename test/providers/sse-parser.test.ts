/** The SSE parser gives the same events however the bytes are split, with LF or CRLF line ends. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../core/providers/types.ts';
import { SseParser } from '../../core/upstream/sse-parser.ts';

const value = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, ''));
const event = fc.record({
  event: fc.option(fc.constantFrom('message_start', 'content_block_delta', 'ping'), { nil: null }),
  data: fc.array(value, { minLength: 1, maxLength: 3 }),
  comment: fc.boolean(),
});

function render(events: Array<{ event: string | null; data: string[]; comment: boolean }>, eol: string): string {
  let out = '';
  for (const e of events) {
    if (e.comment) out += `: keep-alive${eol}`;
    if (e.event) out += `event: ${e.event}${eol}`;
    for (const d of e.data) out += `data: ${d}${eol}`;
    out += eol;
  }
  return out;
}

function parse(text: string, cuts: number[]): SseEvent[] {
  const bytes = Buffer.from(text);
  const p = new SseParser();
  const out: SseEvent[] = [];
  let at = 0;
  for (const c of [...cuts.map((x) => x % (bytes.length + 1))].sort((a, b) => a - b)) {
    out.push(...p.push(bytes.subarray(at, c)));
    at = c;
  }
  out.push(...p.push(bytes.subarray(at)));
  out.push(...p.end());
  return out;
}

describe('SseParser', () => {
  it('LF and CRLF streams, split anywhere (even inside a character), give the events as written', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom('\n', '\r\n', '\r'), (events, cuts, eol) => {
        const expected = events.map((e) => ({ event: e.event, data: e.data.join('\n') }));
        expect(parse(render(events, eol), cuts)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads `data` fields written every way the rules allow, and no other field as data', () => {
    const text = 'data:x\n\ndata:  two spaces\n\ndata\n\ndatum: no\ndata: y\n\ndata:\n\nevent: e\ndata: {"a":1}\ndata: more\n\n';
    expect(parse(text, [])).toEqual([
      { event: null, data: 'x' },
      { event: null, data: ' two spaces' },
      { event: null, data: '' },
      { event: null, data: 'y' },
      { event: null, data: '' },
      { event: 'e', data: '{"a":1}\nmore' },
    ]);
  });

  it('a final event without its blank line still counts', () => {
    expect(parse('data: a\n\ndata: b', [])).toEqual([{ event: null, data: 'a' }, { event: null, data: 'b' }]);
  });
});

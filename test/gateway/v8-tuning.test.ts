import { describe, expect, it } from 'vitest';
import { SERVER_V8_FLAGS, tuneV8ForServer } from '../../core/gateway/v8-tuning.ts';

describe('V8 settings of gateway start', () => {
  it('sets every flag when Node was given none of them', () => {
    const set: string[] = [];
    expect(tuneV8ForServer([], (f) => set.push(f))).toEqual([...SERVER_V8_FLAGS]);
    expect(set).toEqual([...SERVER_V8_FLAGS]);
    expect(SERVER_V8_FLAGS).toContain('--max-inlined-bytecode-size-cumulative=1840');
  });

  it("leaves a flag given on Node's command line to the user, in either spelling", () => {
    const set: string[] = [];
    tuneV8ForServer(['--max_inlined_bytecode_size=300', '--expose-gc'], (f) => set.push(f));
    expect(set).toEqual(['--max-inlined-bytecode-size-cumulative=1840']);
    set.length = 0;
    tuneV8ForServer(['--max-inlined-bytecode-size-cumulative=5000', '--max-inlined-bytecode-size'], (f) => set.push(f));
    expect(set).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, checkDepth } from '../../core/gateway/read-body.ts';

/** `levels` nested containers, alternating objects and arrays, around a number. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v, 'x'] : { a: v, b: null };
  return v;
}

describe('checkDepth', () => {
  it(`takes ${MAX_JSON_DEPTH} levels and refuses one more, in the client's words`, () => {
    expect(() => checkDepth(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => checkDepth(nested(MAX_JSON_DEPTH + 1))).toThrow(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    // A deep branch after shallow siblings is found too.
    expect(() => checkDepth({ model: 'm', messages: [{ role: 'user' }], extra: nested(MAX_JSON_DEPTH) })).toThrow(/levels deep/);
  });

  it('refuses a value nested 100,000 levels without overflowing its own stack', () => {
    expect(() => checkDepth(nested(100_000))).toThrow(/levels deep/);
  });

  it('takes scalars and empty containers', () => {
    for (const v of [null, 1, 'x', true, [], {}]) expect(() => checkDepth(v)).not.toThrow();
  });
});

/**
 * Tool names an upstream cannot take (OpenAI caps function names at 64 characters; MCP tools run longer)
 * are shortened deterministically on the way up and mapped back on the way down, so the client sees
 * the names it declared.
 */
import { createHash } from 'node:crypto';

export const OPENAI_TOOL_NAME_MAX = 64;

/** LiteLLM's scheme: a 55-character prefix, `_`, 8 hex of the name's SHA-256. Stable across turns. */
export function shortToolName(name: string, max = OPENAI_TOOL_NAME_MAX): string {
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, max - 9)}_${hash}`;
}

/** Short name → the client's name, for the names that had to be shortened. */
export class ToolNameMap {
  private readonly back = new Map<string, string>();

  constructor(names: Iterable<string>, max = OPENAI_TOOL_NAME_MAX) {
    for (const n of names) {
      const s = shortToolName(n, max);
      if (s !== n) this.back.set(s, n);
    }
  }

  up(name: string): string {
    return shortToolName(name);
  }

  down(name: string): string {
    return this.back.get(name) ?? name;
  }
}

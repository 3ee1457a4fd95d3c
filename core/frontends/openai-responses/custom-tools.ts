/**
 * Custom (free-text) tools such as Codex's `apply_patch`. Upstreams without them get a function taking one
 * string, `content` (the adapters' encoding); the call comes back as a function call with JSON arguments,
 * which the Responses side turns back into a `custom_tool_call` with the raw input.
 */
import type { CallRequest } from '../../pipeline/call-model.ts';

export const customToolNames = (req: CallRequest): Set<string> => new Set(req.tools.filter((t) => t.kind === 'custom').map((t) => t.name));

/** The raw input inside a custom tool's wrapped arguments (the text itself when the model did not wrap it). */
export function unwrapCustom(args: string): string {
  try {
    const j = JSON.parse(args) as { content?: unknown; input?: unknown };
    if (typeof j.content === 'string') return j.content;
    if (typeof j.input === 'string') return j.input;
  } catch {
    /* not JSON: the model wrote the raw input */
  }
  return args;
}

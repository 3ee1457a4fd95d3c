/**
 * The text a local token count of a neutral request covers: system, messages (text, reasoning, tool calls and
 * their results, documents), the tool definitions and a response schema, which providers bill as prompt too. Admission reserves a
 * budget on this count, so what it leaves out a call can spend unreserved (coding agents send large tool
 * schemas with every call).
 */
import type { CallRequest } from './call-model.ts';

export function callPromptText(req: CallRequest): string {
  let out = req.system.map((p) => p.text).join('\n');
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') out += `\n${p.text}`;
      else if (p.type === 'tool-call') out += `\n${p.name} ${p.arguments}`;
      else if (p.type === 'tool-result') out += `\n${typeof p.content === 'string' ? p.content : p.content.flatMap((x) => (x.type === 'text' ? [x.text] : [])).join('\n')}`;
      else if (p.type === 'document') out += `\n${JSON.stringify(p.raw)}`;
    }
  }
  for (const t of req.tools) out += `\n${t.name} ${t.description ?? ''} ${JSON.stringify(t.parameters ?? t.format ?? {})}`;
  if (req.responseFormat?.type === 'json_schema') out += `\n${JSON.stringify(req.responseFormat.schema)}`;
  return out;
}

/**
 * OpenAI's `tool_choice: {type: "allowed_tools"}` (chat and Responses): a subset of the declared tools
 * the model may use this turn, with a mode. The call model has no such choice, and the upstreams a
 * translated call reaches (Anthropic, Gemini, chat-only servers) restrict tools by offering fewer of them,
 * so the request is narrowed: only the allowed tools are sent, and the mode becomes auto or required.
 */
import { badRequest } from '../errors.ts';
import type { ToolChoice, ToolDefinition } from '../pipeline/call-model.ts';

export function narrowToAllowed(tools: ToolDefinition[], allowed: string[], mode: unknown, field: string): { tools: ToolDefinition[]; toolChoice: ToolChoice } {
  if (mode !== undefined && mode !== 'auto' && mode !== 'required') {
    throw badRequest(`Invalid value for '${field}.mode': expected 'auto' or 'required'.`, 'invalid_value', `${field}.mode`);
  }
  const toolChoice: ToolChoice = { type: mode === 'required' ? 'required' : 'auto' };
  // Only built-in tools allowed (Responses' web search, MCP...): none of them is in the call model.
  if (allowed.length === 0) return { tools, toolChoice };
  const names = new Set(allowed);
  const kept = tools.filter((t) => names.has(t.name));
  if (kept.length === 0) {
    throw badRequest(`'${field}.tools' names none of the tools declared in 'tools'.`, 'invalid_value', `${field}.tools`);
  }
  return { tools: kept, toolChoice };
}

/**
 * The shape of a `POST /v1/responses` body, as far as the gateway reads it. Objects are loose: fields the
 * gateway does not know stay in the body (a native pass-through forwards them unchanged).
 * Source: openai-python `types/responses/response_create_params.py`, `response_input_item_param.py`.
 */
import { z } from 'zod';

const textPart = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const imagePart = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.string().nullish(),
});
const filePart = z.looseObject({ type: z.literal('input_file') });
export const contentPartSchema = z.discriminatedUnion('type', [textPart, refusalPart, imagePart, filePart]);
export type ResponsesContentPart = z.infer<typeof contentPartSchema>;

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPartSchema)]),
});

const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().nullish(),
});

const toolOutput = z.union([z.string(), z.array(contentPartSchema)]);

const functionCallOutputItem = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string(), output: toolOutput });
const customToolCallItem = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  id: z.string().nullish(),
});
const customToolCallOutputItem = z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: z.string(), output: toolOutput });
const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().nullish(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).default([]),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});
/** Items are checked one by one against the schema of their type (`itemSchemas`), so an error names the item. */
export const inputItemSchema = z.looseObject({ type: z.string().optional() });

export const itemSchemas = {
  message: messageItem,
  function_call: functionCallItem,
  function_call_output: functionCallOutputItem,
  custom_tool_call: customToolCallItem,
  custom_tool_call_output: customToolCallOutputItem,
  reasoning: reasoningItem,
} as const;
export type ItemType = keyof typeof itemSchemas;
export type ResponsesInputItem = { [K in ItemType]: z.infer<(typeof itemSchemas)[K]> }[ItemType];

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
const customTool = z.looseObject({
  type: z.literal('custom'),
  name: z.string().min(1),
  description: z.string().nullish(),
  format: z.record(z.string(), z.unknown()).nullish(),
});
/** Built-in (server-side) tools: `web_search`, `file_search`, `local_shell`, `mcp`, ... */
const builtinTool = z.looseObject({ type: z.string() });
export const toolSchema = z.union([functionTool, customTool, builtinTool]);

export const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.enum(['function', 'custom']), name: z.string() }),
  z.looseObject({ type: z.string() }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
  }),
]);

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItemSchema)]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  reasoning: z
    .looseObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
      summary: z.string().nullish(),
    })
    .nullish(),
  text: z.looseObject({ format: textFormat.nullish(), verbosity: z.string().nullish() }).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  include: z.array(z.string()).nullish(),
  service_tier: z.string().nullish(),
  background: z.boolean().nullish(),
});
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

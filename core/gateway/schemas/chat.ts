/**
 * `POST /v1/chat/completions`: every parameter the interface lists, with its type and range, message
 * roles and content shapes. Objects are loose: fields the gateway does not know (providers' extensions)
 * pass through untouched.
 */
import { z } from 'zod';
import {
  choiceCount, logitBias, metadata, modelName, optional, penalty, positiveInt, probability, seed, stop, stream, streamOptions,
  temperature, user,
} from './common.ts';

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string(), detail: optional(z.enum(['auto', 'low', 'high'])) }),
});
const audioPart = z.looseObject({ type: z.literal('input_audio'), input_audio: z.looseObject({ data: z.string(), format: z.string() }) });
const filePart = z.looseObject({ type: z.literal('file'), file: z.looseObject({}) });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
/** Part types some OpenAI-compatible providers take besides the interface's own; their fields are theirs. */
const extensionPart = z.looseObject({ type: z.enum(['input_text', 'input_image', 'input_file', 'video_url', 'audio_url', 'image']) });
const contentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart, refusalPart, extensionPart]);
const content = z.union([z.string(), z.array(contentPart)]);

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content, name: optional(z.string()) }),
  z.looseObject({ role: z.literal('developer'), content, name: optional(z.string()) }),
  z.looseObject({ role: z.literal('user'), content, name: optional(z.string()) }),
  z.looseObject({
    role: z.literal('assistant'),
    content: optional(content),
    refusal: optional(z.string()),
    name: optional(z.string()),
    tool_calls: optional(z.array(z.union([toolCall, z.looseObject({ type: z.string() })]))),
    function_call: optional(z.looseObject({ name: z.string(), arguments: z.string() })),
  }),
  z.looseObject({ role: z.literal('tool'), content, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal('function'), content: optional(z.string()), name: z.string() }),
]);

const functionDef = z.looseObject({
  name: z.string().min(1).max(64),
  description: optional(z.string()),
  parameters: optional(z.looseObject({})),
  strict: optional(z.boolean()),
});
const tool = z.union([
  z.looseObject({ type: z.literal('function'), function: functionDef }),
  z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string() }) }),
]);
const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
  z.looseObject({
    type: z.literal('allowed_tools'),
    allowed_tools: z.looseObject({ mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({})) }),
  }),
  z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string() }) }),
]);
const responseFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      description: optional(z.string()),
      schema: optional(z.looseObject({})),
      strict: optional(z.boolean()),
    }),
  }),
]);

export const chatRequestSchema = z.looseObject({
  model: modelName,
  messages: z.array(message).min(1),
  max_completion_tokens: optional(positiveInt),
  max_tokens: optional(positiveInt),
  n: optional(choiceCount),
  temperature: optional(temperature),
  top_p: optional(probability),
  frequency_penalty: optional(penalty),
  presence_penalty: optional(penalty),
  stop: optional(stop),
  seed: optional(seed),
  logprobs: optional(z.boolean()),
  top_logprobs: optional(z.number().int().min(0).max(20)),
  logit_bias: optional(logitBias),
  response_format: optional(responseFormat),
  tools: optional(z.array(tool)),
  tool_choice: optional(toolChoice),
  parallel_tool_calls: optional(z.boolean()),
  functions: optional(z.array(functionDef)),
  function_call: optional(z.union([z.enum(['none', 'auto']), z.looseObject({ name: z.string() })])),
  stream: optional(stream),
  stream_options: optional(streamOptions),
  service_tier: optional(z.string()),
  store: optional(z.boolean()),
  metadata: optional(metadata),
  modalities: optional(z.array(z.enum(['text', 'audio']))),
  reasoning_effort: optional(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
  verbosity: optional(z.enum(['low', 'medium', 'high'])),
  user: optional(user),
});

export type ChatCompletionRequest = z.output<typeof chatRequestSchema>;

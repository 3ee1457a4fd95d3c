/**
 * An oracle for what reached a provider, written with plain checks and independent of the gateway's
 * zod schemas: every parameter the interface bounds must be inside its bounds in the upstream body.
 */
type Body = Record<string, unknown>;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isInteger(v);

function checks(body: Body, rules: Record<string, (v: unknown) => boolean>): string[] {
  const out: string[] = [];
  for (const [name, ok] of Object.entries(rules)) {
    if (!(name in body) || body[name] === null) continue;
    if (!ok(body[name])) out.push(`${name}=${JSON.stringify(body[name]).slice(0, 60)}`);
  }
  return out;
}

const inRange = (min: number, max: number) => (v: unknown) => isNum(v) && v >= min && v <= max;
const intIn = (min: number, max: number) => (v: unknown) => isInt(v) && (v as number) >= min && (v as number) <= max;
const stopOk = (v: unknown) => typeof v === 'string' || (Array.isArray(v) && v.length <= 4 && v.every((s) => typeof s === 'string'));
const modelOk = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 256;
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function chatViolations(b: Body): string[] {
  const out = checks(b, {
    model: modelOk,
    temperature: inRange(0, 2),
    top_p: inRange(0, 1),
    frequency_penalty: inRange(-2, 2),
    presence_penalty: inRange(-2, 2),
    n: intIn(1, 128),
    max_tokens: intIn(1, Number.MAX_SAFE_INTEGER),
    max_completion_tokens: intIn(1, Number.MAX_SAFE_INTEGER),
    stop: stopOk,
    seed: isInt,
    logprobs: (v) => typeof v === 'boolean',
    top_logprobs: intIn(0, 20),
    stream: (v) => typeof v === 'boolean',
    tool_choice: (v) => ['none', 'auto', 'required'].includes(v as string) || (typeof v === 'object' && v !== null && typeof (v as Body).type === 'string'),
    tools: (v) => Array.isArray(v) && v.every((t) => typeof (t as Body)?.type === 'string' && (t as Body).type !== 'function' || typeof ((t as Body).function as Body)?.name === 'string'),
    response_format: (v) => typeof v === 'object' && v !== null && ['text', 'json_object', 'json_schema'].includes((v as Body).type as string),
  });
  const msgs = b.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) out.push('messages');
  else {
    msgs.forEach((m, i) => {
      const msg = m as Body;
      if (typeof msg !== 'object' || msg === null || !ROLES.has(msg.role as string)) out.push(`messages[${i}].role`);
      const c = msg?.content;
      const contentOk = c === undefined || c === null || typeof c === 'string' || (Array.isArray(c) && c.every((p) => typeof (p as Body)?.type === 'string' && ((p as Body).type !== 'text' || typeof (p as Body).text === 'string')));
      if (!contentOk) out.push(`messages[${i}].content`);
    });
  }
  return out;
}

function completionViolations(b: Body): string[] {
  const out = checks(b, {
    model: modelOk,
    temperature: inRange(0, 2),
    top_p: inRange(0, 1),
    n: intIn(1, 128),
    max_tokens: intIn(1, Number.MAX_SAFE_INTEGER),
    logprobs: intIn(0, 5),
    stop: stopOk,
    echo: (v) => typeof v === 'boolean',
  });
  const p = b.prompt;
  const tokens = (a: unknown) => Array.isArray(a) && a.length > 0 && a.every((x) => isInt(x) && (x as number) >= 0);
  const ok = typeof p === 'string' || (Array.isArray(p) && p.length > 0 && (p.every((x) => typeof x === 'string') || tokens(p) || p.every(tokens)));
  if (!ok) out.push('prompt');
  return out;
}

function embeddingViolations(b: Body): string[] {
  const out = checks(b, { model: modelOk, encoding_format: (v) => v === 'float' || v === 'base64', dimensions: intIn(1, Number.MAX_SAFE_INTEGER) });
  const i = b.input;
  const ok = (typeof i === 'string' && i !== '') || (Array.isArray(i) && i.length > 0 && i.length <= 2048 && i.every((x) => (typeof x === 'string' && x !== '') || isInt(x) || Array.isArray(x)));
  if (!ok) out.push('input');
  return out;
}

function imageViolations(b: Body): string[] {
  const out = checks(b, {
    model: modelOk,
    n: intIn(1, 10),
    size: (v) => typeof v === 'string' && /^(auto|\d+x\d+)$/.test(v),
    quality: (v) => ['standard', 'hd', 'low', 'medium', 'high', 'auto'].includes(v as string),
    response_format: (v) => v === 'url' || v === 'b64_json',
  });
  if (typeof b.prompt !== 'string' || b.prompt === '') out.push('prompt');
  return out;
}

function audioViolations(raw: string): string[] {
  const fields = new Map<string, string[]>();
  for (const m of raw.matchAll(/name="([^"]+)"(?:; filename="[^"]*")?\r\n(?:[^\r\n]+\r\n)*\r\n([^\r]*)\r\n/g)) {
    fields.set(m[1], [...(fields.get(m[1]) ?? []), m[2]]);
  }
  const out: string[] = [];
  for (const [name, values] of fields) if (['model', 'file', 'temperature', 'response_format'].includes(name) && values.length > 1) out.push(`duplicate ${name}`);
  const model = fields.get('model')?.[0];
  if (!model || model.length > 256) out.push('model');
  if (!fields.has('file')) out.push('file');
  const temp = fields.get('temperature')?.[0];
  if (temp !== undefined && !(Number(temp) >= 0 && Number(temp) <= 1 && temp.trim() !== '')) out.push(`temperature=${temp}`);
  const rf = fields.get('response_format')?.[0];
  if (rf !== undefined && !['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'].includes(rf)) out.push(`response_format=${rf}`);
  return out;
}

/** Each upstream request with what is out of bounds in it; empty when every call was clean. */
export function upstreamViolations(requests: { path: string; body: unknown }[]): string[] {
  const out: string[] = [];
  for (const { path, body } of requests) {
    let found: string[] = [];
    if (path.endsWith('/audio/transcriptions') || path.endsWith('/audio/translations')) found = audioViolations(String(body));
    else if (typeof body !== 'object' || body === null) found = ['body is not a JSON object'];
    else if (path.endsWith('/chat/completions')) found = chatViolations(body as Body);
    else if (path.endsWith('/completions')) found = completionViolations(body as Body);
    else if (path.endsWith('/embeddings')) found = embeddingViolations(body as Body);
    else if (path.endsWith('/images/generations')) found = imageViolations(body as Body);
    if (found.length > 0) out.push(`${path}: ${found.join(', ')}`);
  }
  return out;
}

/**
 * Pieces shared by the request schemas, and the one place a zod failure becomes the OpenAI 400:
 * `param` names the field the way the API does (`messages[2].role`), `code` says what is wrong.
 */
import { z } from 'zod';
import { badRequest } from '../../errors.ts';
import type { GatewayError } from '../../errors.ts';

/** Longer names are refused before anything stores or prints them (a 40 MB model name is an attack, not a model). */
export const MAX_MODEL_NAME_LENGTH = 256;

export const modelName = z.string().min(1).max(MAX_MODEL_NAME_LENGTH);
/** Optional parameters: the API treats an explicit null as "not given". */
export const optional = <T extends z.ZodType>(schema: T) => schema.nullish();
export const probability = z.number().min(0).max(1);
export const temperature = z.number().min(0).max(2);
export const penalty = z.number().min(-2).max(2);
export const positiveInt = z.number().int().min(1);
export const seed = z.number().int();
/** The API allows a handful of choices; 128 keeps a worst-case reservation sane. */
export const choiceCount = z.number().int().min(1).max(128);
export const stop = z.union([z.string(), z.array(z.string()).max(4)]);
export const stream = z.boolean();
export const streamOptions = z.looseObject({ include_usage: optional(z.boolean()), include_obfuscation: optional(z.boolean()) });
export const logitBias = z.record(z.string(), z.number().min(-100).max(100));
export const user = z.string();
export const metadata = z.record(z.string().max(64), z.string().max(512));

/** `a.b[2].c`, as the API's `param` spells a path. */
export function paramPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v);

/** The 400 for the first issue zod found: `missing_parameter`, `invalid_type` or `invalid_value`, naming `param`. */
export function requestError(issue: z.core.$ZodIssue, body: unknown): GatewayError {
  // A union (content parts, tool_choice, prompt) reports its best branch's issue deeper down when there is one.
  const deepest = deepestIssue(issue);
  const path = deepest.path;
  const param = paramPath(path);
  const value = valueAt(body, path);
  if (value === undefined) {
    return badRequest(`Missing required parameter: '${param}'.`, 'missing_parameter', param);
  }
  if (deepest.code === 'invalid_type') {
    return badRequest(`Invalid type for '${param}': expected ${deepest.expected}, but got ${describe(value)}.`, 'invalid_type', param);
  }
  const expected = unionTypes(deepest);
  if (expected) return badRequest(`Invalid type for '${param}': expected ${expected}, but got ${describe(value)}.`, 'invalid_type', param);
  return badRequest(`Invalid value for '${param}': ${deepest.message}.`, 'invalid_value', param);
}

/** When no branch of a union even had the right type, the value's type is what is wrong: the types expected. */
function unionTypes(issue: z.core.$ZodIssue): string | null {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return null;
  const types = new Set<string>();
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first || first.code !== 'invalid_type' || first.path.length > 0) return null;
    types.add(first.expected);
  }
  return [...types].join(' or ');
}

/** How far a branch got: deeper paths say more; a mismatched `type` tag only says it was another shape. */
const reach = (i: z.core.$ZodIssue): number => i.path.length - (i.path[i.path.length - 1] === 'type' ? 0.5 : 0);

function deepestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | null = null;
  for (const branch of issue.errors) {
    for (const inner of branch) {
      // A branch's paths are relative to the union.
      const d = deepestIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue);
      if (best === null || reach(d) > reach(best)) best = d;
    }
  }
  // Only a branch that got past the top level says more than "none of the shapes matched".
  if (best && reach(best) > issue.path.length) return best;
  // Else the branch whose type was right says what is wrong with the value (`stop`: 5 strings, too many).
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && first.path.length === 0 && first.code !== 'invalid_type' && first.code !== 'invalid_union') return { ...first, path: issue.path } as z.core.$ZodIssue;
  }
  return issue;
}

/** Validates and types a request body; the returned object keeps every field the client sent. */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw requestError(result.error.issues[0], body);
  return result.data;
}

/**
 * `gateway env --for claude-code|codex|openai`: the exact settings each coding tool needs to use the
 * gateway. Claude Code reads `ANTHROPIC_BASE_URL` (the root: it adds `/v1/messages`) and
 * `ANTHROPIC_AUTH_TOKEN` (sent as a Bearer token); Codex reads a model provider block in
 * `~/.codex/config.toml` (`wire_api = "responses"`, the key in the variable named by `env_key`); OpenAI SDKs
 * read `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
 */
import { out, printJson } from '../context.ts';

export const ENV_FOR_TOOLS = ['claude-code', 'codex', 'openai'] as const;
export type EnvForTool = (typeof ENV_FOR_TOOLS)[number];

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const KEY_PLACEHOLDER = 'sk-gw-...';

export interface ToolSettings {
  tool: EnvForTool;
  /** Environment variables to export. */
  env: Record<string, string>;
  /** For Codex: the block to add to `~/.codex/config.toml`. */
  configToml?: string;
  /** What the printed settings leave to the user: the models this gateway serves, to pick from. */
  notes?: string[];
}

/** The model a tool should ask for when its own default is not served here: a coding model first. */
function pick(models: readonly string[], prefer: readonly RegExp[]): string | undefined {
  for (const re of prefer) {
    const m = models.find((x) => re.test(x));
    if (m !== undefined) return m;
  }
  return models[0];
}

const listed = (models: readonly string[]): string => (models.length > 12 ? `${models.slice(0, 12).join(', ')}, ...` : models.join(', '));

/**
 * `models`: the chat models this gateway is configured to serve (empty when unknown: discovered at start).
 * Claude Code asks for Claude models by name and Codex for its own default: where none of those is served, the
 * settings name a served model, or the pasted settings answer 404 from the first call.
 */
export function toolSettings(tool: EnvForTool, baseUrl: string, key: string | null, models: readonly string[] = []): ToolSettings {
  const secret = key ?? KEY_PLACEHOLDER;
  const served = models.length > 0 ? [`Models served here: ${listed(models)} (all of them: GET ${baseUrl}/models).`] : [];
  switch (tool) {
    case 'claude-code': {
      const env: Record<string, string> = { ANTHROPIC_BASE_URL: baseUrl.replace(/\/v1\/?$/, ''), ANTHROPIC_AUTH_TOKEN: secret };
      const claude = models.some((m) => m.startsWith('claude-'));
      const model = claude ? undefined : pick(models, [/coder|codex/i, /^gpt-5|^o\d/, /sonnet|pro|large/i]);
      if (model !== undefined) {
        // No Claude model here: the session and the background tasks (haiku's) go to a served one.
        env.ANTHROPIC_MODEL = model;
        env.ANTHROPIC_DEFAULT_OPUS_MODEL = model;
        env.ANTHROPIC_DEFAULT_SONNET_MODEL = model;
        env.ANTHROPIC_DEFAULT_HAIKU_MODEL = model;
      }
      return { tool, env, notes: [...served, ...(claude ? ['Claude Code asks for Claude models by name; ANTHROPIC_MODEL picks another served one.'] : [])] };
    }
    case 'openai':
      return { tool, env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: secret }, notes: served };
    case 'codex': {
      const model = pick(models, [/codex/i, /^gpt-5/, /coder/i, /^o\d/]);
      return {
        tool,
        env: { GATEWAY_API_KEY: secret },
        configToml: [
          'model_provider = "gateway"',
          // Codex's own default model may not be served here: name one that is.
          ...(model !== undefined ? [`model = "${model}"`] : []),
          '',
          '[model_providers.gateway]',
          'name = "Local gateway"',
          `base_url = "${baseUrl}"`,
          'env_key = "GATEWAY_API_KEY"',
          'wire_api = "responses"',
        ].join('\n'),
        notes: served,
      };
    }
  }
}

export function printToolSettings(s: ToolSettings, json: boolean): void {
  if (json) {
    // No placeholder a script could export as a key: the variable is named as still needed, with how to get one.
    const env = Object.fromEntries(Object.entries(s.env).filter(([, v]) => v !== KEY_PLACEHOLDER));
    const needed = Object.keys(s.env).filter((k) => s.env[k] === KEY_PLACEHOLDER);
    printJson({
      tool: s.tool,
      env,
      ...(needed.length > 0 ? { key_needed: { variables: needed, how: `gateway env --for ${s.tool} --new-key NAME` } } : {}),
      ...(s.configToml ? { config_toml: s.configToml } : {}),
      ...(s.notes && s.notes.length > 0 ? { notes: s.notes } : {}),
    });
    return;
  }
  for (const n of s.notes ?? []) out(`# ${n}`);
  if (s.configToml) {
    out('# Add to ~/.codex/config.toml (or $CODEX_HOME/config.toml):');
    out(s.configToml);
    out('');
    out('# In the shell that runs codex (the key it sends, named by env_key):');
  }
  for (const [k, v] of Object.entries(s.env)) {
    // Without --new-key there is no secret to print: a comment says how to get one, so `eval` still works.
    if (v === KEY_PLACEHOLDER) out(`# export ${k}=<a gateway key: gateway env --for ${s.tool} --new-key NAME>`);
    else out(`export ${k}=${shellQuote(v)}`);
  }
}

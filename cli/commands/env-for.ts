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
}

export function toolSettings(tool: EnvForTool, baseUrl: string, key: string | null): ToolSettings {
  const secret = key ?? KEY_PLACEHOLDER;
  switch (tool) {
    case 'claude-code':
      return { tool, env: { ANTHROPIC_BASE_URL: baseUrl.replace(/\/v1\/?$/, ''), ANTHROPIC_AUTH_TOKEN: secret } };
    case 'openai':
      return { tool, env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: secret } };
    case 'codex':
      return {
        tool,
        env: { GATEWAY_API_KEY: secret },
        configToml: [
          'model_provider = "gateway"',
          '',
          '[model_providers.gateway]',
          'name = "Local gateway"',
          `base_url = "${baseUrl}"`,
          'env_key = "GATEWAY_API_KEY"',
          'wire_api = "responses"',
        ].join('\n'),
      };
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
    });
    return;
  }
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

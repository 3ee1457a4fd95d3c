/** `gateway env`: shell lines that point OpenAI SDKs at the gateway: `eval "$(gateway env --new-key mytool)"`. */
import type { Command } from 'commander';
import { dataPaths } from '../../core/home.ts';
import { readServerState } from '../../core/server-state.ts';
import { loadSettings } from '../../core/settings.ts';
import { note, out, printJson, withStore } from '../context.ts';
import { ENV_FOR_TOOLS, printToolSettings, toolSettings } from './env-for.ts';
import type { EnvForTool } from './env-for.ts';
import { usageError } from '../cli-error.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';

function gatewayBaseUrl(home: string): string {
  const running = readServerState(home);
  if (running) return running.baseUrl;
  const s = loadSettings(dataPaths(home).settings);
  const host = s.host === '0.0.0.0' || s.host === '::' ? '127.0.0.1' : s.host.includes(':') ? `[${s.host}]` : s.host;
  return `http://${host}:${s.port}/v1`;
}

/**
 * The chat models the configuration names (each provider's `--models`, the demo's, and aliases), for the tools'
 * settings; models a provider lists only at start (discovery) are not known here.
 */
async function servedModels(store: Pick<GatewayState, 'providers' | 'aliases'>): Promise<string[]> {
  const out = new Set<string>();
  for (const p of await store.providers.list()) {
    if (p.type === 'demo') out.add('demo-chat');
    for (const m of p.models ?? []) if (!/embed|whisper|tts|transcribe|dall-e|image/i.test(m)) out.add(m);
  }
  for (const a of await store.aliases.list()) out.add(a.name);
  return [...out];
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function registerEnv(program: Command): void {
  program
    .command('env')
    .description('print OPENAI_BASE_URL (and with --new-key a fresh key as OPENAI_API_KEY) for eval')
    .option('--new-key <name>', 'create a key with this name and export it')
    .option('--json', 'print JSON')
    .option('--for <tool>', `the exact settings for a tool: ${ENV_FOR_TOOLS.join(', ')}`)
    .action(async (opts: { newKey?: string; json?: boolean; for?: string }) => {
      if (opts.for !== undefined && !(ENV_FOR_TOOLS as readonly string[]).includes(opts.for)) {
        throw usageError(`--for: unknown tool "${opts.for}"; one of ${ENV_FOR_TOOLS.join(', ')}.`);
      }
      await withStore(async (store, home) => {
        const baseUrl = gatewayBaseUrl(home);
        let key: string | null = null;
        if (opts.newKey) {
          // Re-running it (a new shell, a lost key) must work: the key of that name gets a new secret.
          const existing = await store.keys.findByName(opts.newKey);
          if (existing) {
            key = (await store.keys.rotate(opts.newKey)).secret;
            note(`Key "${opts.newKey}" existed: it has a new secret now (rotated; the old one stopped working).`);
            if (existing.state === 'disabled') note(`It is disabled: \`gateway keys enable ${opts.newKey}\` before using it.`);
          } else {
            key = (await store.keys.create({ name: opts.newKey })).secret;
            note(`Key "${opts.newKey}" created.`);
          }
          const fed = (await store.providers.list()).filter((p) => p.keySource === 'env' && p.keyEnv === 'OPENAI_API_KEY');
          if (fed.length > 0) {
            note(
              `Note: provider ${fed.map((p) => `"${p.name}"`).join(', ')} reads its own key from $OPENAI_API_KEY, which this sets to the gateway key in this shell. ` +
                'A gateway started from this shell would refuse to send it; keep the provider key in the keychain (`gateway init`) or under another name.',
            );
          }
        }
        if (opts.for !== undefined) return printToolSettings(toolSettings(opts.for as EnvForTool, baseUrl, key, await servedModels(store)), opts.json === true);
        if (opts.json) return printJson({ OPENAI_BASE_URL: baseUrl, ...(key ? { OPENAI_API_KEY: key } : {}) });
        out(`export OPENAI_BASE_URL=${shellQuote(baseUrl)}`);
        if (key) out(`export OPENAI_API_KEY=${shellQuote(key)}`);
      });
    });
}

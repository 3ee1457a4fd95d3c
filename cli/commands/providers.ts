/** `gateway providers ...`: where calls go. Secrets go to the OS keychain or stay in an env var. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_BASE_URLS, DEFAULT_KEY_ENVS, isPresetName, PRESET_NAMES, PRESETS } from '../../core/providers/presets.ts';
import { PROVIDER_TYPES } from '../../core/providers/types.ts';
import type { ProviderSettings, ProviderType } from '../../core/providers/types.ts';
import { DEMO_MODELS } from '../../core/demo/demo-upstream.ts';
import { openKeychain, probeKeychain } from '../../core/secrets/keychain.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import type { ProviderVerdict } from '../../core/admin/provider-check.ts';
import { dataPaths } from '../../core/home.ts';
import { readServerState } from '../../core/server-state.ts';
import { gatewayKeyInVarMessage, holdsGatewayKey } from '../../core/upstream/provider-keys.ts';
import { TEAM_KEYCHAIN_MESSAGE } from '../../core/secrets/team-secrets.ts';
import { CliError, usageError } from '../cli-error.ts';
import { dataHome, note, out, parseList, printJson, table, withStore } from '../context.ts';
import { promptHidden, readStdinSecret } from '../read-secret.ts';

const addSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'provider name must be 1-64 letters, digits, dots, dashes or underscores (no "/")'),
  type: z.string().optional(),
  preset: z.string().optional(),
  baseUrl: z.string().url('--base-url must be a URL such as https://api.example.com/v1').optional(),
  models: z.string().optional(),
  // The message on coerce itself too: `--priority abc` coerces to NaN, which fails the type check first.
  priority: z.coerce.number({ message: '--priority must be an integer (lower goes first; default 100)' }).int('--priority must be an integer (lower goes first; default 100)').optional(),
  keyStdin: z.boolean().optional(),
  keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, '--key-env must be an environment variable name').optional(),
  apiVersion: z.string().optional(),
  deployment: z.array(z.string()).optional(),
});

interface Resolved {
  type: ProviderType;
  preset: string | null;
  baseUrl: string;
  needsKey: boolean;
  options: Record<string, unknown>;
}

function resolveTypeAndPreset(typeArg: string | undefined, presetArg: string | undefined, baseUrlArg: string | undefined): Resolved {
  let type = typeArg;
  let preset = presetArg ?? null;
  // `--type deepseek` is accepted as shorthand for the preset.
  if (type && isPresetName(type)) {
    if (preset && preset !== type) throw usageError(`--type ${type} and --preset ${preset} disagree`);
    preset = type;
    type = 'openai-compatible';
  }
  if (!type) type = preset ? 'openai-compatible' : undefined;
  if (!type) throw usageError(`--type is required: one of ${PROVIDER_TYPES.join(', ')} (or --preset ${PRESET_NAMES.join('|')})`);
  if (!(PROVIDER_TYPES as readonly string[]).includes(type)) {
    throw usageError(`unknown --type ${type}: use one of ${PROVIDER_TYPES.join(', ')}, or a preset: ${PRESET_NAMES.join(', ')}`);
  }
  if (preset !== null && !isPresetName(preset)) throw usageError(`unknown --preset ${preset}: use one of ${PRESET_NAMES.join(', ')}`);
  if (preset !== null && type !== 'openai-compatible') throw usageError(`--preset works with --type openai-compatible, not ${type}`);
  const p = preset !== null && isPresetName(preset) ? PRESETS[preset] : null;
  const baseUrl = baseUrlArg ?? p?.baseUrl ?? DEFAULT_BASE_URLS[type as ProviderType];
  if (!baseUrl) throw usageError(`--base-url is required for --type ${type}${type === 'azure' ? ' (your resource endpoint, e.g. https://NAME.openai.azure.com)' : ''}`);
  const needsKey = type === 'demo' ? false : p ? p.needsKey : type !== 'openai-compatible';
  return { type: type as ProviderType, preset, baseUrl: baseUrl.replace(/\/+$/, ''), needsKey, options: { ...(p?.options ?? {}) } };
}

export async function storeSecret(home: string, name: string, secret: string): Promise<void> {
  const probe = await probeKeychain(home);
  if (!probe.ok) {
    throw new CliError(`No usable OS keychain: ${probe.reason}.\nKeep the key in an environment variable instead: gateway providers add ${name} ... --key-env VAR`);
  }
  const kc = await openKeychain(home);
  await kc.set(name, secret);
}

export function registerProviders(program: Command): void {
  const providers = program.command('providers').description('LLM providers the gateway routes to');

  providers
    .command('add <name>')
    .description('add a provider')
    .option('--type <type>', `${PROVIDER_TYPES.join('|')}`)
    .option('--preset <preset>', PRESET_NAMES.join('|'))
    .option('--base-url <url>', "the base URL its own SDK uses (OpenAI-style: with /v1)")
    .option('--models <a,b>', 'the models it serves (default: ask the provider)')
    .option('--priority <n>', 'lower goes first (default 100)')
    .option('--key-stdin', 'read the API key from stdin and keep it in the OS keychain')
    .option('--key-env <VAR>', 'read the API key from this environment variable at request time')
    .option('--api-version <v>', 'Azure: use the deployments API with this api-version (default: the v1 API)')
    .option('--deployment <model=deployment>', 'Azure: map a model id to a deployment name (repeatable)', (v: string, acc: string[] = []) => [...acc, v])
    .action(async (name: string, raw: Record<string, unknown>) => {
      const parsed = addSchema.safeParse({ name, ...raw });
      if (!parsed.success) throw usageError(parsed.error.issues[0]?.message ?? 'invalid option');
      const o = parsed.data;
      if (o.keyStdin && o.keyEnv) throw usageError('use either --key-stdin or --key-env, not both');
      if (o.keyEnv && holdsGatewayKey(process.env[o.keyEnv])) throw usageError(`refusing --key-env ${o.keyEnv}: ${gatewayKeyInVarMessage(name, o.keyEnv)}`);
      const r = resolveTypeAndPreset(o.type, o.preset, o.baseUrl);
      const options = { ...r.options };
      if (o.apiVersion) options.apiVersion = o.apiVersion;
      if (o.deployment) {
        const map: Record<string, string> = {};
        for (const d of o.deployment) {
          const [model, dep] = d.split('=');
          if (!model || !dep) throw usageError(`--deployment expects model=deployment, got "${d}"`);
          map[model] = dep;
        }
        options.deployments = map;
      }
      let models = parseList(o.models) ?? null;
      if (r.type === 'demo' && !models) models = [...DEMO_MODELS];

      await withStore(async (store, home) => {
        if ((await store.providers.get(name))) throw new CliError(`A provider named "${name}" exists already; remove it first with \`gateway providers remove ${name}\`.`);
        let keySource: ProviderSettings['keySource'] = 'none';
        let secret: string | null = null;
        if (o.keyEnv) keySource = 'env';
        else if (store.kind === 'team' && (o.keyStdin || r.needsKey)) throw new CliError(TEAM_KEYCHAIN_MESSAGE);
        else if (o.keyStdin) {
          secret = await readStdinSecret();
          if (!secret) throw usageError('--key-stdin read an empty key');
          if (holdsGatewayKey(secret)) throw usageError(`refusing --key-stdin: that is a gateway key (sk-gw-...), not ${name}'s own API key.`);
          keySource = 'keychain';
        } else if (r.needsKey) {
          if (!process.stdin.isTTY) {
            const suggestion = (r.preset && isPresetName(r.preset) ? PRESETS[r.preset].keyEnv : DEFAULT_KEY_ENVS[r.type]) ?? 'API_KEY_VAR';
            throw usageError(`provider "${name}" needs an API key: pass --key-stdin (kept in the OS keychain) or --key-env ${suggestion}`);
          }
          secret = await promptHidden(`API key for ${name} (kept in the OS keychain): `);
          if (!secret) throw usageError('no key entered');
          keySource = 'keychain';
        }
        if (secret) await storeSecret(home, name, secret);
        await store.providers.add({ name, type: r.type, preset: r.preset, baseUrl: r.baseUrl, models, priority: o.priority ?? 100, keyEnv: o.keyEnv ?? null, keySource, options });
        note(`Provider "${name}" added (${r.type}${r.preset ? `/${r.preset}` : ''}, ${r.baseUrl}).`);
        if (o.keyEnv && !process.env[o.keyEnv]) note(`Note: $${o.keyEnv} is not set in this shell; the gateway reads it when it sends a request.`);
        if (models === null) await refreshAndReport(store, home, name);
      });
    });

  providers
    .command('list')
    .description('list providers')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withStore(async (store) => {
        const served = await store.providers.allServedModels();
        const list = await store.providers.list();
        if (opts.json) {
          return printJson(list.map((p) => ({ name: p.name, type: p.type, preset: p.preset, base_url: p.baseUrl, priority: p.priority, key: p.keySource === 'env' ? `env:${p.keyEnv}` : p.keySource, models: served.get(p.name) ?? [], models_fixed: p.models !== null })));
        }
        if (list.length === 0) return note('No providers yet. Add one with `gateway providers add NAME --type openai --key-env OPENAI_API_KEY`, or run `gateway start --demo`.');
        table(
          ['NAME', 'TYPE', 'PRIORITY', 'KEY', 'MODELS', 'BASE URL'],
          list.map((p) => {
            const m = served.get(p.name) ?? [];
            return [p.name, p.preset ? `${p.type}/${p.preset}` : p.type, p.priority, p.keySource === 'env' ? `$${p.keyEnv}` : p.keySource, m.length > 4 ? `${m.slice(0, 4).join(',')} +${m.length - 4}` : m.join(',') || '(none known)', p.baseUrl];
          }),
        );
      });
    });

  providers
    .command('remove <name>')
    .description('remove a provider and its keychain entry')
    .action(async (name: string) => {
      await withStore(async (store, home) => {
        const p = await store.providers.get(name);
        if (!p) throw new CliError(`No provider named "${name}"; see \`gateway providers list\`.`);
        if (p.keySource === 'keychain') {
          try {
            await (await openKeychain(home)).delete(name);
          } catch (err) {
            note(`Warning: could not delete the keychain entry: ${(err as Error).message}`);
          }
        }
        await store.providers.remove(name);
        note(`Provider "${name}" removed.`);
        // Aliases keep their targets (the provider may be added back); one left with none of its own serves nothing.
        const stranded = (await store.aliases.list()).filter((a) => a.targets.some((t) => t.provider === name));
        for (const a of stranded) {
          const left = a.targets.filter((t) => t.provider !== name).map((t) => `${t.provider}/${t.model}`);
          note(
            `Warning: alias "${a.name}" still names ${name}/${a.targets.find((t) => t.provider === name)?.model}; ` +
              (left.length > 0 ? `it goes on to ${left.join(', ')}.` : `it now serves nothing: \`gateway aliases set ${a.name} PROVIDER/MODEL\` or \`gateway aliases remove ${a.name}\`.`),
          );
        }
      });
    });

  providers
    .command('refresh [name]')
    .description("re-read providers' model lists")
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, opts: { json?: boolean }) => {
      await withStore(async (store, home) => {
        if (name && !(await store.providers.get(name))) throw new CliError(`No provider named "${name}"; see \`gateway providers list\`.`);
        const results = await refresh(store, home, name);
        if (opts.json) return printJson(results);
        if (results.length === 0) note('No provider lists its models (all have --models).');
        for (const r of results) out(r.ok ? `${r.provider}: ${r.models.length} models` : `${r.provider}: failed: ${r.error}`);
        if (results.some((r) => !r.ok)) process.exitCode = 1;
      });
    });

  providers
    .command('test [name]')
    .description('check each provider: reachable, key accepted, one tiny call')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, opts: { json?: boolean }) => {
      const home = dataHome();
      const running = readServerState(home);
      let results: ProviderVerdict[];
      if (running) {
        // The running gateway's environment and keys are what its calls use: ask it, not this shell.
        note(`Asking the running gateway (pid ${running.pid}, ${running.url}).`);
        results = await testOnGateway(running.url, dataPaths(home).adminToken, name);
      } else {
        results = await withStore(async (store) => {
          if (name && !(await store.providers.get(name))) throw new CliError(`No provider named "${name}"; see \`gateway providers list\`.`);
          const { testProviders } = await import('./provider-test.ts');
          return testProviders(store, home, name);
        });
      }
      if (opts.json) printJson(results);
      else for (const r of results) out(`${r.ok ? 'ok  ' : 'FAIL'} ${r.provider}: ${r.verdict}`);
      if (results.length === 0) note('No providers yet. Add one with `gateway providers add NAME --type openai --key-stdin`, or run `gateway init`.');
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}

async function testOnGateway(url: string, tokenFile: string, name: string | undefined): Promise<ProviderVerdict[]> {
  const { request } = await import('undici');
  const token = readFileSync(tokenFile, 'utf8').trim();
  const res = await request(`${url}/admin/providers/test`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(name ? { name } : {}),
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  const body = (await res.body.json()) as { results?: ProviderVerdict[]; error?: { message?: string } };
  if (res.statusCode === 404 && body.error) throw new CliError(`${body.error.message ?? 'not found'} See \`gateway providers list\`.`);
  if (res.statusCode !== 200 || !body.results) throw new CliError(`The running gateway at ${url} could not test its providers: HTTP ${res.statusCode} ${body.error?.message ?? ''}`.trim());
  return body.results;
}

async function refresh(store: GatewayState, home: string, name?: string) {
  // Loaded on demand: the HTTP client and every adapter are heavy, and most commands never call a provider.
  const [{ Transport }, { ProviderKeys }, { refreshProviderModels }] = await Promise.all([
    import('../../core/upstream/transport.ts'),
    import('../../core/upstream/provider-keys.ts'),
    import('../../core/gateway/discovery.ts'),
  ]);
  const transport = new Transport(10_000);
  try {
    const keys = new ProviderKeys(async () => openKeychain(home).catch(() => null));
    return await refreshProviderModels(store, keys, transport, name);
  } finally {
    await transport.close();
  }
}

async function refreshAndReport(store: GatewayState, home: string, name: string): Promise<void> {
  const [r] = await refresh(store, home, name);
  if (!r) return;
  if (r.ok) note(`It serves ${r.models.length} models${r.models.length ? ` (${r.models.slice(0, 5).join(', ')}${r.models.length > 5 ? ', …' : ''})` : ''}.`);
  else note(`Could not list its models yet (${r.error}); run \`gateway providers refresh ${name}\` later, or add them with --models.`);
}

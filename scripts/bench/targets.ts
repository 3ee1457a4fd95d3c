/**
 * The rows of the table, one function per kind of target: the fake upstream itself, a pass-through proxy
 * script (the lean floor, bare-proxy.ts), our gateway on one API, and the peers (Portkey, LiteLLM).
 */
import path from 'node:path';
import { probeClientAbort } from './abort-probe.ts';
import { BENCH_DIR, MODEL, freePort } from './common.ts';
import { CHAT, MESSAGES, RESPONSES } from './context.ts';
import type { Api, BenchContext, Scenario } from './context.ts';
import { startGatewayProcess } from './gateway.ts';
import type { BenchProvider, GatewayProcess } from './gateway.ts';
import { ensureLiteLLM, startLiteLLM } from './litellm.ts';
import { runTarget } from './measure.ts';
import { portkeyVersion, startPortkey } from './portkey.ts';
import { spawnNode } from './proc.ts';
import { TARGET, emptyTarget } from './results.ts';
import { awaitReady } from './server.ts';
import type { ServerUnderTest } from './server.ts';
import { SERVER_V8_FLAGS } from '../../core/gateway/v8-tuning.ts';

export const directScenario: Scenario = {
  name: TARGET.direct,
  run: async (ctx) => {
    await runTarget(ctx, { name: TARGET.direct, label: 'direct (client → fake upstream)', start: null });
  },
};

/**
 * One of the bench's own proxies (`script` in scripts/bench/) in front of the fake upstream, pinned to the servers' core;
 * `nodeArgs` go to Node before the script.
 */
export async function startProxy(ctx: BenchContext, name: string, script: string, nodeArgs: readonly string[] = []): Promise<ServerUnderTest & { port: number }> {
  const port = await freePort();
  const child = spawnNode({ name, cpu: ctx.serverCpu, args: [...nodeArgs, path.join(BENCH_DIR, script), '--port', String(port), '--target', ctx.upBase] });
  const ready = await awaitReady(child, port, `http://127.0.0.1:${port}/healthz`, { timeoutMs: 15_000, settleMs: 500 });
  return { url: `http://127.0.0.1:${port}`, port, headers: {}, ...ready, stop: () => child.stop() };
}

/** A pass-through proxy script run as `node SCRIPT --port N --target UPSTREAM` with a `/healthz` route. */
function proxyScenario(name: string, label: string, script: string, note: string, nodeArgs: readonly string[] = []): Scenario {
  return {
    name,
    run: async (ctx) => {
      await runTarget<ServerUnderTest & { port: number }>(ctx, {
        name,
        label,
        note,
        bigPrompt: true,
        start: () => startProxy(ctx, name, script, nodeArgs),
        probeClientAbort: (c, server) => probeClientAbort(c, server.url, server.port),
      });
    },
  };
}

export const leanScenario = proxyScenario(
  TARGET.lean,
  'lean `node:http` + undici proxy (the floor)',
  'lean-proxy.ts',
  'the floor every ratio is against: node:http + undici.request, one write per upstream chunk with backpressure, no stream.pipeline, the upstream call aborted when the client leaves.',
);

/** The floor again with the V8 flags `gateway start` sets: what those flags give any Node proxy, beside what they give the gateway. */
export const leanV8Scenario = proxyScenario(
  TARGET.leanV8,
  "lean proxy with the gateway's V8 flags",
  'lean-proxy.ts',
  `the floor run with the V8 flags \`gateway start\` sets (${SERVER_V8_FLAGS.join(' ')}; core/gateway/v8-tuning.ts): the gateway's ratio against it is what its own code costs over a floor tuned alike.`,
  SERVER_V8_FLAGS,
);

export const bareScenario = proxyScenario(
  TARGET.bare,
  "the project's `bare-proxy.ts`",
  'bare-proxy.ts',
  "the project's earlier floor, kept for comparison: stream.pipeline per request (an AbortSignal and a DOMException each time).",
);

interface GatewayRow {
  name: string;
  label: string;
  api: Api;
  providers: (ctx: BenchContext) => BenchProvider[];
  headers?: (key: string) => Record<string, string>;
  bigPrompt?: boolean;
  note: string;
}

/** Our gateway, started as the README says, on one API; its audit table must hold a row per answered call. */
function gatewayScenario(row: GatewayRow): Scenario {
  return {
    name: row.name,
    run: async (ctx) => {
      await runTarget<GatewayProcess>(ctx, {
        name: row.name,
        label: row.label,
        api: row.api,
        bigPrompt: row.bigPrompt,
        note: `\`${ctx.gatewayCommand}\`; ${row.note}`,
        start: async () => {
          const gw = await startGatewayProcess({ providers: row.providers(ctx), cpu: ctx.serverCpu });
          return row.headers ? { ...gw, headers: row.headers(gw.key) } : gw;
        },
        stop: async (c, gw, t) => {
          t.audit = await gw.stopWithAudit();
          const answered = [t.nonStream, t.stream, t.bigPrompt].reduce((n, l) => n + (l ? l.requests - l.errors : 0), 0);
          if (!t.audit) c.problems.push(`${t.name}: could not read its audit table after the run`);
          // Counted from the running totals: retention may have deleted the oldest rows (not the calls' record).
          else if (t.audit.recorded < answered) c.problems.push(`${t.name}: only ${t.audit.recorded} calls recorded for ${answered} answered requests`);
          if (t.nonStream && t.nonStream.costed < t.nonStream.requests - t.nonStream.errors) {
            c.problems.push(`${t.name}: ${t.nonStream.requests - t.nonStream.costed} non-stream responses without x-gateway-cost-usd`);
          }
        },
      });
    },
  };
}

/** The one openai-compatible provider on the fake upstream that the chat rows (and the scenarios with a gateway of their own) use. */
export const chatProvider = (ctx: BenchContext): BenchProvider[] => [{ name: 'bench-upstream', baseUrl: `${ctx.upBase}/v1`, priority: 1 }];

export const gatewayChatScenario = gatewayScenario({
  name: TARGET.gateway,
  label: 'gateway, as the README starts it',
  api: CHAT,
  providers: chatProvider,
  bigPrompt: true,
  note: 'auth, routing, cost and audit with bodies on; an openai-compatible provider on the fake upstream.',
});

export const messagesScenario = gatewayScenario({
  name: TARGET.messages,
  label: 'gateway /v1/messages → Anthropic (pass-through)',
  api: MESSAGES,
  providers: (ctx) => [{ name: 'bench-anthropic', baseUrl: ctx.upBase, priority: 1, type: 'anthropic' }],
  headers: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
  note: "Anthropic Messages in, the same fake upstream answering in Anthropic's format; compare with the chat rows.",
});

export const responsesScenario = gatewayScenario({
  name: TARGET.responses,
  label: 'gateway /v1/responses → chat (bridged)',
  api: RESPONSES,
  providers: chatProvider,
  note: 'the chat conversation sent as a Responses request; the gateway sends chat completions upstream and renders the Response object / the Responses event stream.',
});

export const portkeyScenario: Scenario = {
  name: TARGET.portkey,
  run: async (ctx) => {
    const version = portkeyVersion();
    ctx.peers.portkey = version;
    await runTarget(ctx, {
      name: TARGET.portkey,
      label: `Portkey ${version}`,
      note:
        `called with x-portkey-provider: openai and x-portkey-custom-host: ${ctx.upBase}/v1 (no config, cache, retries or log sinks: its plain pass-through mode). ` +
        'Its streams need a shim: with the @hono/node-server 1.19 that npm installs, Portkey 1.15.2 answers every stream with a 500 ("TypeError: immutable", Portkey-AI/gateway#1389); ' +
        "portkey-child.ts re-wraps event-stream fetch() responses as Portkey's own fix (PR #1551) does. Non-stream calls are untouched.",
      start: (c) => startPortkey(c.upBase, c.serverCpu),
    });
  },
};

export const litellmScenario: Scenario = {
  name: TARGET.litellm,
  run: async (ctx) => {
    const installed = process.env.BENCH_LITELLM === '0' ? { skip: 'LiteLLM skipped: BENCH_LITELLM=0' } : ensureLiteLLM(ctx.log);
    if ('skip' in installed) {
      const t = emptyTarget(TARGET.litellm, 'LiteLLM, one worker');
      t.skipped = installed.skip;
      ctx.targets.push(t);
      ctx.log(installed.skip);
      return;
    }
    ctx.peers.litellm = installed.version;
    await runTarget(ctx, {
      name: TARGET.litellm,
      label: `LiteLLM ${installed.version}, one worker`,
      note: `litellm --num_workers 1 with one model (openai/${MODEL} at ${ctx.upBase}/v1) and a master key; no database or callbacks.`,
      start: (c) => startLiteLLM(c.upBase, c.serverCpu),
    });
  },
};

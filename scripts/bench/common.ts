/**
 * Shared bits of the benchmark: configuration from the environment, the request bodies every target
 * receives, and small process helpers (free ports, RSS and CPU time from /proc).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, '..', '..');
export const OUT_DIR = path.join(REPO_ROOT, '.bench');

export const MODEL = 'bench-model';
/** The prefix under which the fake upstream fails a share of requests (the failover scenario). */
export const FLAKY_PREFIX = '/flaky';
/** The prefix under which the fake upstream streams slowly (the client-abort probe). */
export const SLOW_PREFIX = '/slow';

function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name}=${raw}: expected a number in [${min}, ${max}]`);
  return n;
}

export interface BenchConfig {
  /** Measured seconds per run. */
  seconds: number;
  /** Warm-up seconds before each measured run (results discarded). */
  warmupSeconds: number;
  /**
   * Load, half non-stream and half stream, given once to each server the bench starts before its first
   * measured run: V8 takes ~3 s of load to settle the lean proxy and ~9 s the gateway (the warm-up scenario).
   */
  serverWarmupSeconds: number;
  /** How many times the lean floor and the gateway are measured, interleaved (rounds.ts). */
  rounds: number;
  concurrency: number;
  /** Content chunks in the fake SSE stream (plus a finish chunk, a usage chunk and [DONE]). */
  streamChunks: number;
  /** Delay between SSE chunks in ms (0: written back to back). */
  chunkDelayMs: number;
  /** Share of requests the flaky upstream fails with a 500 in the failover scenario. */
  flakyRate: number;
  /** How long the idle scenario leaves its gateway idle between its two windows. */
  idleSeconds: number;
  /** How many one-second windows the warm-up scenario measures from each server's start. */
  curveSeconds: number;
  /** Scenarios to run (see run.ts's list); all by default. */
  only: Set<string> | null;
  profile: boolean;
  /** Exit 1 when a goal check fails (the checks always print). */
  strict: boolean;
}

export function loadConfig(argv: string[] = process.argv.slice(2)): BenchConfig {
  const only = process.env.BENCH_ONLY
    ? new Set(
        process.env.BENCH_ONLY.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
    : null;
  return {
    seconds: envNumber('BENCH_SECONDS', 5, 0.5, 120),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1, 0, 30),
    serverWarmupSeconds: envNumber('BENCH_SERVER_WARMUP_SECONDS', 10, 0, 120),
    rounds: Math.round(envNumber('BENCH_ROUNDS', 5, 1, 9)),
    concurrency: Math.round(envNumber('BENCH_CONCURRENCY', 16, 1, 1024)),
    streamChunks: Math.round(envNumber('BENCH_STREAM_CHUNKS', 32, 1, 10_000)),
    chunkDelayMs: envNumber('BENCH_CHUNK_DELAY_MS', 0, 0, 1000),
    flakyRate: envNumber('BENCH_FLAKY_RATE', 0.5, 0, 1),
    idleSeconds: envNumber('BENCH_IDLE_SECONDS', 60, 1, 600),
    curveSeconds: Math.round(envNumber('BENCH_CURVE_SECONDS', 12, 6, 120)),
    only,
    profile: argv.includes('--profile') || process.env.BENCH_PROFILE === '1',
    strict: argv.includes('--strict') || process.env.BENCH_STRICT === '1',
  };
}

/** A realistic small chat request (~1 KB): a system prompt, one earlier turn and a question. */
const messages = [
  {
    role: 'system',
    content:
      'You are a careful assistant for a software team. Answer concisely, cite the file you rely on, and say so when you are unsure. ' +
      'Prefer small, reviewable changes and explain trade-offs in one or two sentences.',
  },
  { role: 'user', content: 'We keep a local SQLite audit log of every LLM call. How should we batch the writes so the request path never waits on disk?' },
  {
    role: 'assistant',
    content:
      'Queue each row in memory on the request path, and flush the queue in one transaction on a short timer (say 200 ms) or when it reaches a batch size. ' +
      'Use WAL mode and a busy timeout, and flush everything on a graceful shutdown.',
  },
  { role: 'user', content: 'And how much can a crash lose with that design? Give me the bound in one sentence.' },
];

/** The same conversation as a Responses request (instructions + input items), bridged by the gateway to the chat upstream. */
const responsesInput = messages.filter((m) => m.role !== 'system').map((m) => ({ type: 'message', role: m.role, content: m.content }));
export const RESPONSES_BODY = JSON.stringify({ model: MODEL, instructions: messages[0].content, input: responsesInput, temperature: 0.2, max_output_tokens: 256, store: false });
export const RESPONSES_STREAM_BODY = JSON.stringify({
  model: MODEL,
  instructions: messages[0].content,
  input: responsesInput,
  temperature: 0.2,
  max_output_tokens: 256,
  store: false,
  stream: true,
});

export const CHAT_BODY = JSON.stringify({ model: MODEL, messages, temperature: 0.2, max_tokens: 256 });

/**
 * A coding agent's turn: the same conversation with ~100 KB of source code pasted in the last user message
 * (agents resend such prompts every turn). Varied text, so no layer gets an unrealistically easy input.
 */
function bigPrompt(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `export function handler${i}(req: Request, limit = ${i % 97}): Promise<Response> { return route(req, "path/${i.toString(36)}", limit * ${i}); } // "quoted" ${'é'.repeat(i % 3)}`;
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return lines.join('\n');
}
export const BIG_PROMPT_BYTES = 100 * 1024;
export const BIG_CHAT_BODY = JSON.stringify({
  model: MODEL,
  messages: [...messages.slice(0, -1), { role: 'user', content: `Review this file and list the handlers without a limit check:\n${bigPrompt(BIG_PROMPT_BYTES)}` }],
  temperature: 0.2,
  max_tokens: 256,
});
export const STREAM_BODY = JSON.stringify({ model: MODEL, messages, temperature: 0.2, max_tokens: 256, stream: true, stream_options: { include_usage: true } });

/** A port that was free a moment ago (loopback). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident set size of a process in bytes, or null when /proc is not readable. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * A /proc `stat` file (a process's or a thread's): its name, which sits in parentheses and may hold spaces,
 * and the fields after it (state first). Null when it cannot be read (no /proc, or the task ended).
 */
export function readProcStat(path: string): { name: string; fields: string[] } | null {
  try {
    const stat = readFileSync(path, 'utf8');
    const close = stat.lastIndexOf(')');
    return { name: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
  } catch {
    return null;
  }
}

/** User + system CPU ms in a stat's fields (utime and stime, in clock ticks). */
export const statCpuMs = (fields: string[]): number => ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;

/** CPU time (user + system) a process has used so far, in ms, or null without /proc. */
export function cpuMs(pid: number): number | null {
  const stat = readProcStat(`/proc/${pid}/stat`);
  return stat === null ? null : statCpuMs(stat.fields);
}

export const mib = (bytes: number | null): string => (bytes === null ? 'n/a' : `${(bytes / 1048576).toFixed(1)} MiB`);

/** The same conversation as an Anthropic Messages request (system apart), for the `/v1/messages` pass-through row. */
const anthropicMessages = messages.filter((m) => m.role !== 'system');
const anthropicSystem = [{ type: 'text', text: messages[0].content }];
export const MESSAGES_MODEL = 'bench-claude';
export const MESSAGES_BODY = JSON.stringify({ model: MESSAGES_MODEL, system: anthropicSystem, messages: anthropicMessages, temperature: 0.2, max_tokens: 256 });
export const MESSAGES_STREAM_BODY = JSON.stringify({
  model: MESSAGES_MODEL,
  system: anthropicSystem,
  messages: anthropicMessages,
  temperature: 0.2,
  max_tokens: 256,
  stream: true,
});

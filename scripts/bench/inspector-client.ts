/**
 * CPU profiles of a server started as users start it, covering exactly a measured window. The process is
 * started with `NODE_OPTIONS=--inspect-port=0` (which opens nothing by itself); SIGUSR1 then opens its
 * inspector on a free port, which it prints on stderr, and the V8 profiler is driven over the inspector's
 * WebSocket. No change to the gateway is needed, and no other process is profiled.
 */
import { writeFileSync } from 'node:fs';
import type { Child } from './proc.ts';
import { waitForLine } from './proc.ts';

/** The NODE_OPTIONS that make SIGUSR1 open the inspector on a free port instead of 9229. */
export const INSPECTABLE_NODE_OPTIONS = '--inspect-port=0';

interface Pending {
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export class InspectorProfiler {
  #ws: WebSocket | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #child: Child;
  readonly #pid: number;

  /** `child`'s stderr carries the "Debugger listening on ws://..." line of the process `pid` (its own or a descendant's). */
  constructor(child: Child, pid: number) {
    this.#child = child;
    this.#pid = pid;
  }

  async #connect(): Promise<WebSocket> {
    if (this.#ws) return this.#ws;
    const listening = waitForLine(this.#child, /Debugger listening on (ws:\/\/\S+)/, 10_000, 'stderr');
    process.kill(this.#pid, 'SIGUSR1');
    const url = (await listening)[1];
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`inspector: cannot connect to ${url}`)), { once: true });
    });
    ws.addEventListener('message', (ev: MessageEvent) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const p = msg.id === undefined ? undefined : this.#pending.get(msg.id);
      if (!p || msg.id === undefined) return;
      this.#pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`inspector: ${msg.error.message}`));
      else p.resolve(msg.result);
    });
    this.#ws = ws;
    return ws;
  }

  async #post(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const ws = await this.#connect();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  }

  async start(): Promise<void> {
    await this.#post('Profiler.enable');
    await this.#post('Profiler.setSamplingInterval', { interval: 500 });
    await this.#post('Profiler.start');
  }

  async stop(file: string): Promise<void> {
    const { profile } = (await this.#post('Profiler.stop')) as { profile: unknown };
    writeFileSync(file, JSON.stringify(profile));
  }

  /** Disconnects, so the process can exit without waiting for its debugger. */
  close(): void {
    this.#ws?.close();
    this.#ws = null;
  }
}

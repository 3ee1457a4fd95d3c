/**
 * Writes a stream's frames to the client: through the front end's renderer, with backpressure (a slow
 * client slows the upstream read), keep-alives during silences for protocols that have them, and what
 * the end of the stream needs (usage, the text relayed so far for estimates).
 */
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Frame } from '../providers/types.ts';
import type { Usage } from '../usage.ts';
import { ClientGone } from '../gateway/attempts.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import type { StreamRenderer } from './front-end.ts';

let keepAliveMs = 10_000;

/** How long a stream may stay byte-silent before a keep-alive is written (tests shorten it). */
export function setKeepAliveInterval(ms: number): void {
  keepAliveMs = ms;
}

/**
 * What a write sends, encoded once. The text is a rope of every event one upstream read rendered: as a string,
 * node:http would flatten and measure it, then encode it again to write it (~2 µs a 34-event stream).
 */
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

export class Relay {
  done = false;
  failed = false;
  text = '';
  usage: Usage | null = null;
  upstreamUsage: Record<string, unknown> | null = null;
  /** That chunk's text, when it can go out as the upstream wrote it. */
  upstreamUsageText: string | null = null;
  private started = false;
  /** What the frames of the current upstream read rendered: written in one go by `flush()` (one write per read, not per event). */
  private out = '';
  private lastWrite = Date.now();
  private timer: NodeJS.Timeout | null = null;
  private readonly ctx: RequestContext;
  private readonly res: ServerResponse;
  private readonly renderer: StreamRenderer;

  constructor(ctx: RequestContext, res: ServerResponse, renderer: StreamRenderer) {
    this.ctx = ctx;
    this.res = res;
    this.renderer = renderer;
    if (renderer.keepAlive() !== null) {
      const every = keepAliveMs;
      this.timer = setInterval(() => this.keepAlive(every), Math.max(10, Math.floor(every / 2)));
      this.timer.unref();
    }
  }

  /** Renders the frames of one upstream read and writes them to the client in one write. */
  async handleAll(frames: readonly Frame[]): Promise<void> {
    for (const f of frames) this.handle(f);
    // After the upstream's end, what is held goes out with the closing text, in `endWith`.
    if (!this.done || this.failed) await this.flush();
  }

  /** Writes what the frames handled so far rendered (nothing when they rendered nothing). */
  async flush(): Promise<void> {
    if (this.out === '') return;
    const s = this.out;
    this.out = '';
    await this.write(s);
  }

  /** Ends the response with what is held and the protocol's closing text, in one write. */
  endWith(closing: string): void {
    if (this.res.destroyed) throw new ClientGone();
    const text = this.out + closing;
    this.out = '';
    this.res.end(utf8(text));
  }

  handle(f: Frame): void {
    if (this.done) return;
    switch (f.kind) {
      case 'event': {
        const e = f.event;
        if (e.type === 'usage') {
          this.usage = e.usage;
          return;
        }
        if (e.type === 'text-delta' || e.type === 'reasoning-delta') this.text += e.text;
        else if (e.type === 'tool-call-start') this.text += e.name;
        else if (e.type === 'tool-call-delta') this.text += e.argumentsDelta;
        this.firstToken(e.type !== 'ping');
        this.out += this.renderer.event(e);
        return;
      }
      case 'raw':
        this.firstToken(f.good);
        this.text += f.text;
        this.out += this.renderer.raw ? this.renderer.raw(f.data, f.event) : `${f.event ? `event: ${f.event}\n` : ''}data: ${f.data}\n\n`;
        return;
      case 'usage':
        this.usage = f.usage;
        if (f.raw) {
          this.upstreamUsage = f.raw;
          this.upstreamUsageText = f.rawText ?? null;
        }
        return;
      case 'error': {
        if (f.raw) {
          // A pass-through relays the upstream's own error event: its clients read its exact wording.
          this.end(f.failure.status >= 500 ? f.failure.status : 502, f.failure.type ?? 'api_error', f.failure.message, `${f.raw.event ? `event: ${f.raw.event}\n` : ''}data: ${f.raw.data}\n\n`);
          return;
        }
        this.fail(new GatewayError({ status: f.failure.status >= 500 ? f.failure.status : 502, type: 'api_error', code: f.failure.code ?? 'upstream_error', message: f.failure.message }));
        return;
      }
      case 'end':
        this.done = true;
        return;
    }
  }

  fail(err: GatewayError): void {
    this.end(err.status, err.type, err.message, this.renderer.error(err));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private end(status: number, errorType: string, message: string, text: string): void {
    if (this.done) return;
    this.done = true;
    this.failed = true;
    this.stop();
    this.ctx.record.outcome = { status, errorType, errorMessage: message };
    this.ctx.record.responseBody = this.text;
    const before = this.out;
    this.out = '';
    if (!this.res.destroyed) this.res.end(utf8(before + text));
  }

  private firstToken(good: boolean): void {
    if (!good || this.started) return;
    this.started = true;
    this.ctx.record.ttftMs = this.ctx.record.elapsedMs();
  }

  private keepAlive(every: number): void {
    if (this.done || this.res.destroyed || Date.now() - this.lastWrite < every) return;
    const text = this.renderer.keepAlive();
    if (text === null) return;
    this.lastWrite = Date.now();
    this.res.write(text);
  }

  async write(s: string): Promise<void> {
    if (this.res.destroyed) throw new ClientGone();
    this.lastWrite = Date.now();
    if (this.res.write(utf8(s))) return;
    const signal = this.ctx.abort.signal;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.res.once('drain', done);
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted) throw new ClientGone();
  }
}

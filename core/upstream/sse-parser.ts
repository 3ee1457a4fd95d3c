/**
 * Incremental server-sent-events parser (WHATWG rules): handles CRLF/LF/CR line ends, multi-line
 * `data:`, comments and `event:` names, and events split across network chunks.
 */
import type { SseEvent } from '../providers/types.ts';

export class SseParser {
  private buffer = '';
  private eventName: string | null = null;
  private dataLines: string[] = [];
  private readonly decoder = new TextDecoder();

  /** Feeds raw bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    return this.drain();
  }

  /** The connection closed: a final event without its blank line still counts. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    const events = this.drain();
    if (this.buffer.length > 0) {
      this.line(this.buffer);
      this.buffer = '';
    }
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private drain(): SseEvent[] {
    const buf = this.buffer;
    // Almost every stream ends its lines with LF only: then lines are found by indexOf, not char by char.
    if (buf.indexOf('\r') === -1) return this.drainLf(buf);
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A CR at the very end may be the first half of CRLF: wait for more bytes.
      if (c === 13 && i === buf.length - 1) break;
      const line = buf.slice(start, i);
      if (c === 13 && buf.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
      if (line.length === 0) {
        const ev = this.dispatch();
        if (ev) events.push(ev);
      } else {
        this.line(line);
      }
    }
    this.buffer = buf.slice(start);
    return events;
  }

  private drainLf(buf: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = buf.indexOf('\n'); i !== -1; i = buf.indexOf('\n', start)) {
      if (i === start) {
        const ev = this.dispatch();
        if (ev) events.push(ev);
      } else {
        this.line(buf.slice(start, i));
      }
      start = i + 1;
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    return events;
  }

  private line(line: string): void {
    if (line.charCodeAt(0) === 58) return; // ':' comment / keep-alive
    // `data:` (nearly every line of a stream): its value without slicing out the field name first.
    if (line.charCodeAt(4) === 58 && line.charCodeAt(0) === 100 && line.charCodeAt(1) === 97 && line.charCodeAt(2) === 116 && line.charCodeAt(3) === 97) {
      this.dataLines.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
  }

  private dispatch(): SseEvent | null {
    if (this.dataLines.length === 0) {
      this.eventName = null;
      return null;
    }
    // One data line (nearly every event): no join.
    const ev: SseEvent = { event: this.eventName, data: this.dataLines.length === 1 ? this.dataLines[0] : this.dataLines.join('\n') };
    this.dataLines = [];
    this.eventName = null;
    return ev;
  }
}

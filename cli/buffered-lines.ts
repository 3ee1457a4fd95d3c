/**
 * Lines for a stream written in batches: one `write` every few ms instead of one per line. The
 * per-call line of `gateway start` cost 3-6% of the server's CPU under load when written one by one.
 * Whatever is held is written at `flush()` and when the process exits (stdout to a pipe or file is
 * synchronous on Linux and macOS, so an exit handler's write lands).
 *
 * Each line is encoded into the batch's buffer as it comes. Held as one string, the batch was a rope of a
 * few hundred lines that the write flattened and encoded at once, as UTF-16 since the call line has a `→`:
 * ~500 ns a line against ~300 here. A line may also come in pieces, written one after the other: a piece without
 * a character beyond Latin-1 is flattened and encoded as one byte a character, so the call line passes its `→`
 * as a piece of its own (~100 ns less than the whole line as UTF-16).
 */
const FLUSH_EVERY_MS = 10;
const BATCH_BYTES = 64 * 1024;
const NEWLINE = 10;

export interface LineWriter {
  /** One line: a string, or its pieces in order. */
  line(text: string | readonly string[]): void;
  flush(): void;
}

export function bufferedLines(stream: NodeJS.WritableStream = process.stdout): LineWriter {
  let batch: Buffer | null = null;
  let used = 0;
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (batch === null || used === 0) return;
    // A new buffer for the next batch: the stream may still hold this one.
    const out = batch.subarray(0, used);
    batch = null;
    used = 0;
    stream.write(out);
  };
  process.on('exit', flush);
  return {
    line(text) {
      let units = 0;
      if (typeof text === 'string') units = text.length;
      else for (const piece of text) units += piece.length;
      // A UTF-16 unit is at most 3 bytes of UTF-8: the bound says whether the line fits without encoding it twice.
      const most = units * 3 + 1;
      if (most > BATCH_BYTES) {
        flush();
        stream.write(`${typeof text === 'string' ? text : text.join('')}\n`);
        return;
      }
      if (batch !== null && used + most > BATCH_BYTES) flush();
      if (batch === null) batch = Buffer.allocUnsafe(BATCH_BYTES);
      if (typeof text === 'string') used += batch.write(text, used);
      else for (const piece of text) used += batch.write(piece, used);
      batch[used++] = NEWLINE;
      if (timer === null) {
        timer = setTimeout(flush, FLUSH_EVERY_MS);
        timer.unref();
      }
    },
    flush,
  };
}

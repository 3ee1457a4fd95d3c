/**
 * The worker side of the threaded audit writer: its own SQLite connection and an `AuditWriter`, so
 * batched inserts (~50 µs a row with bodies) never run on the request thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AuditWriter } from './audit-writer.ts';
import type { AuditWriterOptions } from './audit-writer.ts';
import { tupleToRow } from './call-row-tuple.ts';
import type { CallRowTuple } from './call-row-tuple.ts';
import { openDatabase, storageErrorFor } from './db.ts';

export type AuditThreadMessage =
  | { type: 'rows'; rows: CallRowTuple[] }
  | { type: 'flush'; seq: number }
  | { type: 'retention' }
  | { type: 'close'; seq: number };

export interface AuditThreadData {
  file: string;
  options: Omit<AuditWriterOptions, 'onError'>;
  /** Int32 slots: [0] the last completed flush's sequence number, [1] rows written so far (synchronous flushes read both). */
  done: SharedArrayBuffer;
}

const port = parentPort;
if (port) {
  const data = workerData as AuditThreadData;
  const db = openDatabase(data.file);
  const writer = new AuditWriter(db, { ...data.options, onError: (e) => port.postMessage({ type: 'error', message: String(storageErrorFor(e, data.file)) }) });
  const done = new Int32Array(data.done);
  port.on('message', (m: AuditThreadMessage) => {
    if (m.type === 'rows') {
      for (const row of m.rows) writer.record(tupleToRow(row));
      return;
    }
    if (m.type === 'retention') {
      writer.enforceRetention();
      return;
    }
    // Timer flushes happen inside the writer; count them too before answering.
    Atomics.store(done, 1, writer.stats().written);
    Atomics.add(done, 1, writer.flush());
    if (m.type === 'close') {
      writer.close();
      db.close();
    }
    Atomics.store(done, 0, m.seq);
    Atomics.notify(done, 0);
    if (m.type === 'close') port.close();
  });
}

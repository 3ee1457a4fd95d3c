/**
 * The worker side of the threaded audit writer: its own SQLite connection and an `AuditWriter`, so
 * batched inserts (~50 µs a row with bodies) never run on the request thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AuditWriter } from './audit-writer.ts';
import type { AuditWriterOptions } from './audit-writer.ts';
import { rowToTuple, tupleToRow } from './call-row-tuple.ts';
import type { CallRowTuple } from './call-row-tuple.ts';
import { openDatabase, storageErrorFor } from './db.ts';

export type AuditThreadMessage =
  | { type: 'rows'; rows: CallRowTuple[] }
  | { type: 'flush'; seq: number }
  | { type: 'retention' }
  | { type: 'close'; seq: number };

/** What the thread tells the request thread: a write that failed, or its unwritten rows as it goes away. */
export type AuditThreadReply = { type: 'error'; message: string } | { type: 'unwritten'; rows: CallRowTuple[]; message: string };

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
  // This connection only writes audit rows and their totals. The one CHECK they meet, `calls.pricing IN (...)`,
  // made SQLite build and drop a temporary b-tree for every row (~1.3 µs of a ~7 µs insert); `AuditWriter`
  // refuses a row with another pricing itself, as the constraint did.
  db.pragma('ignore_check_constraints = ON');
  const reply = (r: AuditThreadReply): void => port.postMessage(r);
  const writer = new AuditWriter(db, { ...data.options, onError: (e) => reply({ type: 'error', message: String(storageErrorFor(e, data.file)) }) });
  const done = new Int32Array(data.done);
  // Whatever escapes (a bug on this thread): the rows queued here and not yet written go back to the request
  // thread, which writes them itself from then on, instead of dying with this thread.
  process.on('uncaughtException', (error) => {
    try {
      reply({ type: 'unwritten', rows: writer.takeQueued().map(rowToTuple), message: String(error) });
    } finally {
      process.exit(1);
    }
  });
  port.on('message', (m: AuditThreadMessage) => {
    if (m.type === 'rows') {
      for (const tuple of m.rows) {
        // A row that cannot be read must not take the rest of its batch with it.
        try {
          writer.record(tupleToRow(tuple));
        } catch (error) {
          reply({ type: 'error', message: `an audit row could not be read: ${String(error)}` });
        }
      }
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

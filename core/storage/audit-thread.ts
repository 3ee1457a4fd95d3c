/**
 * The worker side of the threaded audit writer: its own SQLite connection and an `AuditWriter`, so
 * batched inserts (~50 µs a row with bodies) never run on the request thread.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { AuditWriter } from './audit-writer.ts';
import type { AuditWriterOptions } from './audit-writer.ts';
import { FAILED_SLOT, FLUSHED_SLOT, WRITTEN_SLOT } from './audit-thread-slots.ts';
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
  /** Int32 slots shared with the request thread (audit-thread-slots.ts): flushes done, rows written, failed. */
  done: SharedArrayBuffer;
  /**
   * Where a failing thread hands its unwritten rows back: a port of its own, which the request thread can read
   * while it blocks in a synchronous flush, or as the thread's exit comes in, however those two are ordered.
   */
  handBack: MessagePort;
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
  // Every row's request bytes came by transfer (or as a copy of their own): nothing else holds them.
  const writer = new AuditWriter(db, { ...data.options, releaseRequestBytes: true, onError: (e) => reply({ type: 'error', message: String(storageErrorFor(e, data.file)) }) });
  const done = new Int32Array(data.done);
  // Whatever escapes (a bug on this thread): the rows queued here and not yet written go back to the request
  // thread, which writes them itself from then on, instead of dying with this thread.
  process.on('uncaughtException', (error) => {
    try {
      const rows = writer.takeQueued().map(rowToTuple);
      // Batches posted to this thread and not read yet would die with it: they go back too.
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
        const queued = m.message as AuditThreadMessage | null;
        if (queued?.type === 'rows' && Array.isArray(queued.rows)) rows.push(...queued.rows);
      }
      data.handBack.postMessage({ type: 'unwritten', rows, message: String(error) } satisfies AuditThreadReply);
    } finally {
      Atomics.store(done, FAILED_SLOT, 1);
      Atomics.notify(done, FLUSHED_SLOT);
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
    Atomics.store(done, WRITTEN_SLOT, writer.stats().written);
    Atomics.add(done, WRITTEN_SLOT, writer.flush());
    if (m.type === 'close') {
      writer.close();
      db.close();
    }
    Atomics.store(done, FLUSHED_SLOT, m.seq);
    Atomics.notify(done, FLUSHED_SLOT);
    if (m.type === 'close') port.close();
  });
}

/** The worker side of the read runner: its own SQLite connection, answering named queries one at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './db.ts';
import { runReadQuery } from './read-queries.ts';
import type { ReadRequest } from './read-queries.ts';

const port = parentPort;
if (port) {
  const db = openDatabase((workerData as { file: string }).file);
  port.on('message', (m: ReadRequest) => port.postMessage(runReadQuery(db, m)));
  port.on('close', () => db.close());
}

/** A SQLite Store on a fresh temporary data home for each test of the file, closed and removed after it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { Store } from '../../core/storage/index.ts';

export function tempStorePerTest(prefix: string): () => Store {
  let home = '';
  let store: Store | null = null;
  beforeEach(() => {
    home = mkdtempSync(path.join(tmpdir(), prefix));
    store = Store.open(home);
  });
  afterEach(() => {
    store?.close();
    store = null;
    rmSync(home, { recursive: true, force: true });
  });
  return () => {
    if (!store) throw new Error('tempStorePerTest: the store exists only inside a test');
    return store;
  };
}

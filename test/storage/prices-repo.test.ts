import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../core/storage/db.ts';
import { Store } from '../../core/storage/index.ts';

let home: string;
let store: Store;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-prices-'));
  store = Store.open(home);
});
afterEach(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

describe('PricesRepo', () => {
  it('sets, replaces, lists and removes user prices', () => {
    const set = store.prices.set('my-model', { inputPerMtok: 1, outputPerMtok: 2 });
    expect(set).toMatchObject({ model: 'my-model', inputPerMtok: 1, outputPerMtok: 2, cacheReadPerMtok: null, cacheWritePerMtok: null });
    store.prices.set('my-model', { inputPerMtok: 0.5, outputPerMtok: 1.5, cacheReadPerMtok: 0.05, cacheWritePerMtok: 0.625 });
    store.prices.set('another', { inputPerMtok: 0, outputPerMtok: 0 });
    expect(store.prices.get('my-model')).toMatchObject({ inputPerMtok: 0.5, outputPerMtok: 1.5, cacheReadPerMtok: 0.05, cacheWritePerMtok: 0.625 });
    expect(store.prices.list().map((p) => p.model)).toEqual(['another', 'my-model']);
    store.prices.remove('another');
    expect(store.prices.get('another')).toBeNull();
    let code: string | undefined;
    try {
      store.prices.remove('another');
    } catch (error) {
      code = (error as StorageError).code;
    }
    expect(code).toBe('price_not_found');
  });

  it('rejects negative or non-finite prices', () => {
    expect(() => store.prices.set('m', { inputPerMtok: -1, outputPerMtok: 1 })).toThrow(StorageError);
    expect(() => store.prices.set('m', { inputPerMtok: 1, outputPerMtok: Number.NaN })).toThrow(StorageError);
    expect(() => store.prices.set('m', { inputPerMtok: 1, outputPerMtok: 1, cacheReadPerMtok: Infinity })).toThrow(StorageError);
    expect(store.prices.list()).toEqual([]);
  });

  it('bumps the config version on set and remove', () => {
    const v0 = store.configVersion();
    store.prices.set('m', { inputPerMtok: 1, outputPerMtok: 1 });
    store.prices.remove('m');
    expect(store.configVersion()).toBe(v0 + 2);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../core/storage/db.ts';
import { Store } from '../../core/storage/index.ts';

let home: string;
let store: Store;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-aliases-'));
  store = Store.open(home);
});
afterEach(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

describe('AliasesRepo', () => {
  it('sets, replaces, lists and removes aliases, keeping target order', () => {
    const targets = [
      { provider: 'openai', model: 'gpt-4o-mini' },
      { provider: 'groq', model: 'llama-3.1-8b-instant' },
    ];
    expect(store.aliases.set('fast', targets)).toEqual({ name: 'fast', targets, strategy: 'priority' });
    store.aliases.set('cheap', [{ provider: 'deepseek', model: 'deepseek-chat' }], 'cheapest');
    expect(store.aliases.get('fast')).toEqual({ name: 'fast', targets, strategy: 'priority' });
    expect(store.aliases.list().map((a) => a.name)).toEqual(['cheap', 'fast']);

    store.aliases.set('fast', [targets[1], targets[0]], 'fastest');
    expect(store.aliases.get('fast')).toEqual({ name: 'fast', targets: [targets[1], targets[0]], strategy: 'fastest' });

    store.aliases.remove('fast');
    expect(store.aliases.get('fast')).toBeNull();
    expect(() => store.aliases.remove('fast')).toThrow(StorageError);
  });

  it('stores only provider and model of each target', () => {
    const target = { provider: 'p', model: 'm', extra: 'x' };
    store.aliases.set('a', [target]);
    expect(store.aliases.get('a')?.targets).toEqual([{ provider: 'p', model: 'm' }]);
  });

  it('rejects an empty target list or an unknown strategy', () => {
    expect(() => store.aliases.set('a', [])).toThrow(/at least one/);
    expect(() => store.aliases.set('a', [{ provider: '', model: 'm' }])).toThrow(StorageError);
    expect(() => store.aliases.set('a', [{ provider: 'p', model: 'm' }], 'random' as 'priority')).toThrow(StorageError);
  });

  it('bumps the config version on set and remove', () => {
    const v0 = store.configVersion();
    store.aliases.set('a', [{ provider: 'p', model: 'm' }]);
    store.aliases.set('a', [{ provider: 'p', model: 'n' }]);
    store.aliases.remove('a');
    expect(store.configVersion()).toBe(v0 + 3);
  });
});

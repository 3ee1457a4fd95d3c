import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderSettings } from '../../core/providers/types.ts';
import { StorageError } from '../../core/storage/db.ts';
import { Store } from '../../core/storage/index.ts';

let home: string;
let store: Store;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-providers-'));
  store = Store.open(home);
});
afterEach(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

function settings(name: string, extra: Partial<ProviderSettings> = {}): Omit<ProviderSettings, 'seq'> {
  return {
    name,
    type: 'openai-compatible',
    preset: null,
    baseUrl: `https://${name}.example/v1`,
    models: null,
    priority: 100,
    keyEnv: null,
    keySource: 'keychain',
    options: {},
    ...extra,
  };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StorageError);
    return (error as StorageError).code;
  }
  return undefined;
}

describe('ProvidersRepo', () => {
  it('adds with an increasing seq and reads back every setting', () => {
    const a = store.providers.add(settings('a', { preset: 'groq', models: ['m1', 'm2'], options: { apiVersion: '2024-10-21', deployments: { 'gpt-4o': 'dep' } } }));
    const b = store.providers.add(settings('b', { keySource: 'env', keyEnv: 'B_KEY' }));
    expect(a.seq).toBe(1);
    expect(b.seq).toBe(2);
    expect(store.providers.get('a')).toEqual({
      ...settings('a', { preset: 'groq', models: ['m1', 'm2'], options: { apiVersion: '2024-10-21', deployments: { 'gpt-4o': 'dep' } } }),
      seq: 1,
    });
    expect(store.providers.get('b')).toMatchObject({ keySource: 'env', keyEnv: 'B_KEY', models: null });
    expect(store.providers.get('missing')).toBeNull();
  });

  it('lists by priority, then in the order added', () => {
    store.providers.add(settings('first'));
    store.providers.add(settings('urgent', { priority: 10 }));
    store.providers.add(settings('second'));
    store.providers.add(settings('last', { priority: 200 }));
    expect(store.providers.list().map((p) => p.name)).toEqual(['urgent', 'first', 'second', 'last']);
    store.providers.update('last', { priority: 1 });
    expect(store.providers.list().map((p) => p.name)).toEqual(['last', 'urgent', 'first', 'second']);
  });

  it('updates, keeping name and seq, and removes', () => {
    store.providers.add(settings('p'));
    const updated = store.providers.update('p', { models: ['x'], keySource: 'none', options: { a: 1 } });
    expect(updated).toMatchObject({ name: 'p', seq: 1, models: ['x'], keySource: 'none', options: { a: 1 }, baseUrl: 'https://p.example/v1' });
    expect(store.providers.remove('p').name).toBe('p');
    expect(store.providers.get('p')).toBeNull();
    expect(codeOf(() => store.providers.remove('p'))).toBe('provider_not_found');
    expect(codeOf(() => store.providers.update('p', { priority: 1 }))).toBe('provider_not_found');
  });

  it('rejects duplicates and invalid settings', () => {
    store.providers.add(settings('dup'));
    expect(codeOf(() => store.providers.add(settings('dup')))).toBe('provider_exists');
    expect(codeOf(() => store.providers.add(settings('has/slash')))).toBe('invalid_input');
    expect(codeOf(() => store.providers.add(settings('x', { type: 'bogus' as ProviderSettings['type'] })))).toBe('invalid_input');
    expect(codeOf(() => store.providers.add(settings('x', { keySource: 'env', keyEnv: null })))).toBe('invalid_input');
    expect(codeOf(() => store.providers.add(settings('x', { baseUrl: 'not a url' })))).toBe('invalid_input');
    expect(codeOf(() => store.providers.add(settings('x', { priority: 1.5 })))).toBe('invalid_input');
  });

  it('refuses anything that looks like a secret, and has no column for one', () => {
    expect(codeOf(() => store.providers.add(settings('x', { options: { apiKey: 'sk-live' } })))).toBe('secret_in_settings');
    expect(codeOf(() => store.providers.add(settings('x', { options: { headers: { Authorization: 'Bearer t' } } })))).toBe('secret_in_settings');
    expect(codeOf(() => store.providers.add(settings('x', { baseUrl: 'https://user:pw@host.example/v1' })))).toBe('secret_in_settings');
    expect(codeOf(() => store.providers.add(settings('x', { baseUrl: 'https://host.example/v1?key=abc' })))).toBe('secret_in_settings');
    store.providers.add(settings('ok'));
    expect(codeOf(() => store.providers.update('ok', { options: { token: 't' } }))).toBe('secret_in_settings');
    expect(store.providers.list().map((p) => p.name)).toEqual(['ok']);

    const columns = store.db.prepare<[], string>(`SELECT name FROM pragma_table_info('providers')`).pluck().all();
    expect(columns).toEqual(['name', 'type', 'preset', 'base_url', 'models', 'priority', 'key_env', 'key_source', 'options', 'seq', 'created_at']);
  });

  it('caches discovered models and serves the fixed list when one is set', () => {
    store.providers.add(settings('disc'));
    store.providers.add(settings('fixed', { models: ['f1'] }));
    store.providers.add(settings('empty', { priority: 1 }));
    expect(store.providers.discoveredModels('disc')).toEqual([]);
    expect(store.providers.lastDiscoveredAt('disc')).toBeNull();

    store.providers.setDiscoveredModels('disc', ['b', 'a', 'b']);
    store.providers.setDiscoveredModels('fixed', ['ignored-when-fixed']);
    expect(store.providers.discoveredModels('disc')).toEqual(['a', 'b']);
    expect(store.providers.lastDiscoveredAt('disc')).toBeTypeOf('number');
    store.providers.setDiscoveredModels('disc', ['c']);
    expect(store.providers.discoveredModels('disc')).toEqual(['c']);

    expect([...store.providers.allServedModels()]).toEqual([
      ['empty', []],
      ['disc', ['c']],
      ['fixed', ['f1']],
    ]);
    expect(codeOf(() => store.providers.setDiscoveredModels('nope', ['x']))).toBe('provider_not_found');
  });

  it('drops the discovery cache with the provider, or when its address changes', () => {
    store.providers.add(settings('p'));
    store.providers.setDiscoveredModels('p', ['m']);
    store.providers.update('p', { priority: 5 });
    expect(store.providers.discoveredModels('p')).toEqual(['m']);
    store.providers.update('p', { baseUrl: 'https://elsewhere.example/v1' });
    expect(store.providers.discoveredModels('p')).toEqual([]);

    store.providers.setDiscoveredModels('p', ['m']);
    store.providers.remove('p');
    expect(store.db.prepare(`SELECT COUNT(*) FROM provider_models`).pluck().get()).toBe(0);
  });

  it('bumps the config version on changes, but not for an unchanged discovery', () => {
    const v0 = store.configVersion();
    store.providers.add(settings('p'));
    expect(store.configVersion()).toBe(v0 + 1);
    store.providers.update('p', { priority: 3 });
    expect(store.configVersion()).toBe(v0 + 2);
    store.providers.setDiscoveredModels('p', ['a', 'b']);
    expect(store.configVersion()).toBe(v0 + 3);
    store.providers.setDiscoveredModels('p', ['b', 'a']);
    expect(store.configVersion()).toBe(v0 + 3);
    store.providers.remove('p');
    expect(store.configVersion()).toBe(v0 + 4);
  });
});

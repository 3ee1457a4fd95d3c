import { describe, expect, it } from 'vitest';
import { KeychainUnavailableError, MemorySecretStore, type SecretStore } from '../../core/secrets/secret-store.ts';

describe('MemorySecretStore', () => {
  it('is a SecretStore of kind memory', () => {
    const store: SecretStore = new MemorySecretStore();
    expect(store.kind).toBe('memory');
  });

  it('stores, reads, overwrites and deletes', async () => {
    const store = new MemorySecretStore();
    expect(await store.get('openai')).toBeNull();
    await store.set('openai', 'sk-first');
    expect(await store.get('openai')).toBe('sk-first');
    await store.set('openai', 'sk-second');
    expect(await store.get('openai')).toBe('sk-second');
    expect(await store.delete('openai')).toBe(true);
    expect(await store.get('openai')).toBeNull();
    expect(await store.delete('openai')).toBe(false);
  });

  it('keeps accounts apart', async () => {
    const store = new MemorySecretStore();
    await store.set('openai', 'sk-o');
    await store.set('anthropic', 'sk-a');
    expect(await store.delete('openai')).toBe(true);
    expect(await store.get('anthropic')).toBe('sk-a');
  });

  it('keeps instances apart and accepts initial entries', async () => {
    const a = new MemorySecretStore([['groq', 'gsk-1']]);
    const b = new MemorySecretStore();
    expect(await a.get('groq')).toBe('gsk-1');
    expect(await b.get('groq')).toBeNull();
    await b.set('groq', 'gsk-2');
    expect(await a.get('groq')).toBe('gsk-1');
  });

  it('rejects an empty account or secret, like the keychain store', async () => {
    const store = new MemorySecretStore();
    await expect(store.get('')).rejects.toBeInstanceOf(TypeError);
    await expect(store.set('', 'x')).rejects.toBeInstanceOf(TypeError);
    await expect(store.set('openai', '')).rejects.toBeInstanceOf(TypeError);
    await expect(store.delete('')).rejects.toBeInstanceOf(TypeError);
  });
});

describe('KeychainUnavailableError', () => {
  it('carries a code, the reason, and the way out', () => {
    const err = new KeychainUnavailableError('no Secret Service is running (headless Linux?)', { detail: 'DBus error: x' });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('KeychainUnavailableError');
    expect(err.code).toBe('keychain_unavailable');
    expect(err.reason).toBe('no Secret Service is running (headless Linux?)');
    expect(err.detail).toBe('DBus error: x');
    expect(err.message).toContain('no Secret Service is running (headless Linux?)');
    expect(err.message).toContain('--key-env VAR');
  });

  it('keeps a cause when given one', () => {
    const cause = new Error('native');
    expect(new KeychainUnavailableError('x', { cause }).cause).toBe(cause);
    expect(new KeychainUnavailableError('x').cause).toBeUndefined();
  });
});

/**
 * Where provider secrets live. The real store is the OS keychain (`keychain.ts`); the memory store
 * exists for tests and for a user who explicitly opts out of persistence. Accounts are provider names.
 * Nothing here may ever put a secret value into an error message or a log line.
 */
export interface SecretStore {
  readonly kind: 'keychain' | 'memory';
  /** The stored secret, or `null` when the account has none. */
  get(account: string): Promise<string | null>;
  /** Creates or overwrites the account's secret. */
  set(account: string, secret: string): Promise<void>;
  /** `true` if something was deleted, `false` if the account had no secret. */
  delete(account: string): Promise<boolean>;
}

/**
 * The keychain cannot be used right now. `reason` is a plain-words sentence fragment for humans
 * ("no Secret Service is running (headless Linux?)"); `detail` is the platform's own text, kept apart
 * so a front end can decide whether to show it. The message always names the way out (`--key-env`),
 * because the design promises that a missing keychain never leaves the user stuck.
 */
export class KeychainUnavailableError extends Error {
  readonly code: 'keychain_unavailable';
  readonly reason: string;
  readonly detail: string | undefined;

  constructor(reason: string, options?: { detail?: string; cause?: unknown }) {
    super(
      `The OS keychain is unavailable: ${reason}. ` +
        'Keep the provider key in an environment variable instead and pass `--key-env VAR`.',
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'KeychainUnavailableError';
    this.code = 'keychain_unavailable';
    this.reason = reason;
    this.detail = options?.detail;
  }
}

/**
 * A process-local store. Secrets vanish when the process exits, which is the point: tests get
 * isolation, and a user who chose this fallback knows nothing is written to disk.
 */
export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory' as const;
  readonly #secrets = new Map<string, string>();

  constructor(initial?: Iterable<readonly [string, string]>) {
    if (initial) for (const [account, secret] of initial) this.#secrets.set(account, secret);
  }

  async get(account: string): Promise<string | null> {
    checkAccount(account);
    return this.#secrets.get(account) ?? null;
  }

  async set(account: string, secret: string): Promise<void> {
    checkAccount(account);
    if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be a non-empty string');
    this.#secrets.set(account, secret);
  }

  async delete(account: string): Promise<boolean> {
    checkAccount(account);
    return this.#secrets.delete(account);
  }
}

// Same rules as the keychain store, so code tested against this store behaves the same on the real one.
function checkAccount(account: string): void {
  if (typeof account !== 'string' || account === '') throw new TypeError('account must be a non-empty string');
}

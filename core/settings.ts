/** Server settings from `settings.json` in the data home, validated with zod; every field has a default. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { cassetteConfigSchema, cassetteFromEnv } from './cassettes/mode.ts';

export const settingsSchema = z
  .object({
    port: z.number().int().min(0).max(65535).default(4141),
    host: z.string().min(1).default('127.0.0.1'),
    /** Extra `Host` names accepted besides loopback ones (DNS-rebinding guard). */
    allowedHosts: z.array(z.string()).default([]),
    /** Browser origins allowed by CORS; empty means no CORS at all. */
    corsOrigins: z.array(z.string()).default([]),
    bodyLimitBytes: z.number().int().positive().default(50 * 1024 * 1024),
    /** How long a graceful stop lets calls in flight finish before it cuts them (each still gets its audit row). */
    shutdownGraceMs: z.number().int().min(0).default(30_000),
    timeouts: z
      .object({
        connectMs: z.number().int().positive().default(10_000),
        firstByteStreamMs: z.number().int().positive().default(120_000),
        firstByteMs: z.number().int().positive().default(600_000),
        idleMs: z.number().int().positive().default(60_000),
        /** Longest silence while a client sends its request body (default 60 s); then 408 and the connection closes. */
        bodyMs: z.number().int().positive().optional(),
      })
      .prefault({}),
    routing: z
      .object({
        strategy: z.enum(['priority', 'cheapest', 'fastest']).default('priority'),
        maxAttempts: z.number().int().min(1).max(10).default(4),
        breakerFailures: z.number().int().min(1).default(3),
        breakerCooldownMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
    audit: z
      .object({
        storeBodies: z.boolean().default(true),
        retentionDays: z.number().positive().default(90),
        maxRows: z.number().int().positive().default(1_000_000),
        /** The database file's size cap (default 2 GiB); the oldest calls go first. */
        maxBytes: z.number().int().positive().optional(),
      })
      .prefault({}),
    upstream: z
      .object({
        /** Connections per provider origin. */
        connections: z.number().int().min(1).max(10_000).default(256),
        /** Per-provider overrides of `connections`, by provider name. */
        connectionsByProvider: z.record(z.string(), z.number().int().min(1).max(10_000)).default({}),
        /** Longest wait for a free connection before a 503 the SDKs retry. */
        queueTimeoutMs: z.number().int().positive().default(30_000),
      })
      .prefault({}),
    /** Team mode: the PostgreSQL URL holding keys, providers, prices and the audit log (needs `redis` too). */
    database: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL').optional(),
    /** Team mode: the Redis URL holding budget reservations, rate-limit windows and change notification. */
    redis: z.string().regex(/^rediss?:\/\//, 'a redis:// URL').optional(),
    /** Record or replay every model call (see README "Record and replay"); a key's own cassette wins. */
    cassettes: cassetteConfigSchema.optional(),
  })
  .strict();

export type Settings = z.infer<typeof settingsSchema>;

/** Defaults of settings that are optional in the type (callers may pass partial nested objects). */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;
export const DEFAULT_AUDIT_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * Precedence: `overrides` (command-line flags) over the environment (`GATEWAY_CASSETTE_MODE`/`_DIR`,
 * for a gateway started by a script or CI job) over the file.
 */
export function loadSettings(file: string, overrides: Partial<Settings> = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  let raw: unknown = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file} is not valid JSON: ${(err as Error).message}`);
    }
  }
  const fromEnv = cassetteFromEnv(env);
  const parsed = settingsSchema.safeParse({ ...(raw as object), ...(fromEnv ? { cassettes: fromEnv } : {}), ...stripUndefined(overrides) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const settings = parsed.data;
  // A relative cassette directory in settings.json is relative to the data home's file, not the cwd.
  if (settings.cassettes && !path.isAbsolute(settings.cassettes.dir)) settings.cassettes = { ...settings.cassettes, dir: path.resolve(path.dirname(file), settings.cassettes.dir) };
  return settings;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

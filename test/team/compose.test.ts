/**
 * compose.yaml has no Docker engine to run it here: its shape is checked instead. Two gateway
 * instances on one PostgreSQL and one Redis, started after both are healthy, each with its own data
 * home and port, team mode selected through the documented variables, no provider secret in the file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../support/cli.ts';

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parse(readFileSync(`${REPO_ROOT}/compose.yaml`, 'utf8'), { merge: true }) as { services: Record<string, Service> };

describe('compose.yaml', () => {
  const services = compose.services;
  const gateways = Object.entries(services).filter(([, s]) => s.command?.includes('start'));

  it('runs two gateway instances, PostgreSQL and Redis', () => {
    expect(gateways.map(([name]) => name).sort()).toEqual(['gateway-a', 'gateway-b']);
    expect(services.postgres.image).toMatch(/^postgres:\d+/);
    expect(services.redis.image).toMatch(/^redis:\d+/);
    expect(services.postgres.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(services.redis.healthcheck?.test.join(' ')).toContain('ping');
  });

  it('points every instance at the shared state, after both servers are healthy', () => {
    const homes = new Set<string>();
    const ports = new Set<string>();
    for (const [, s] of gateways) {
      expect(s.environment?.GATEWAY_DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(s.environment?.GATEWAY_REDIS_URL).toBe('redis://redis:6379');
      expect(s.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
      expect(s.command).toEqual(expect.arrayContaining(['--host', '0.0.0.0', '--no-tui']));
      homes.add(s.environment?.GATEWAY_HOME ?? '');
      for (const p of s.ports ?? []) ports.add(p.split(':').slice(0, -1).join(':'));
    }
    expect(homes.size).toBe(2);
    expect(ports.size).toBe(2);
    // Published on loopback only: the TLS reverse proxy is what faces the network.
    for (const p of ports) expect(p.startsWith('127.0.0.1:')).toBe(true);
  });

  it('holds no provider secret', () => {
    for (const [, s] of gateways) {
      for (const [k, v] of Object.entries(s.environment ?? {})) if (/API_KEY$/.test(k)) expect(v).toMatch(/^\$\{[A-Z_]+:-\}$/);
    }
  });
});

/**
 * Every CLI command against a team's state: flags (`--database`/`--redis`), the environment
 * (`GATEWAY_DATABASE_URL`/`GATEWAY_REDIS_URL`) and settings.json all select PostgreSQL + Redis, and
 * what one machine's CLI writes another's reads. The keychain is refused with a clear message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../support/cli.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled, teamServersRequired, type RunningServer } from './servers.ts';

const run = teamServersInstalled() || teamServersRequired();

describe.skipIf(!run)('the CLI in team mode', () => {
  let pgServer: RunningServer;
  let redisServer: RunningServer;
  let database: string;
  const homes: string[] = [];
  const home = () => {
    const h = mkdtempSync(path.join(tmpdir(), 'gw-team-cli-'));
    homes.push(h);
    return h;
  };

  beforeAll(async () => {
    [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
    database = await createDatabase(pgServer.url, 'gateway_cli');
  }, 120_000);

  afterAll(async () => {
    await pgServer?.stop();
    await redisServer?.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  });

  it('flags, environment and settings.json all reach the same state', async () => {
    const flags = ['--database', database, '--redis', redisServer.url];
    const created = await runCli([...flags, 'keys', 'create', '--name', 'alice', '--budget', '5'], { home: home() });
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);

    const viaEnv = await runCli(['keys', 'list', '--json'], { home: home(), env: { GATEWAY_DATABASE_URL: database, GATEWAY_REDIS_URL: redisServer.url } });
    expect(viaEnv.code).toBe(0);
    expect((JSON.parse(viaEnv.stdout) as Array<{ name: string; budget_usd: number }>).map((k) => [k.name, k.budget_usd])).toEqual([['alice', 5]]);

    const withSettings = home();
    writeFileSync(path.join(withSettings, 'settings.json'), JSON.stringify({ database, redis: redisServer.url }));
    expect((await runCli(['providers', 'add', 'oai', '--type', 'openai', '--key-env', 'OPENAI_API_KEY', '--models', 'gpt-4o-mini'], { home: withSettings })).code).toBe(0);
    expect((await runCli(['aliases', 'set', 'fast', 'oai/gpt-4o-mini'], { home: withSettings })).code).toBe(0);
    expect((await runCli(['prices', 'set', 'gpt-4o-mini', '--input', '1', '--output', '2'], { home: withSettings })).code).toBe(0);
    const providers = await runCli([...flags, 'providers', 'list', '--json'], { home: home() });
    expect(providers.stdout).toContain('"oai"');
    const aliases = await runCli([...flags, 'aliases', 'list', '--json'], { home: home() });
    expect(aliases.stdout).toContain('"fast"');
    const usage = await runCli([...flags, 'usage', '--json'], { home: home() });
    expect(usage.code).toBe(0);
    const logs = await runCli([...flags, 'logs', '--json'], { home: home() });
    expect(logs.code).toBe(0);
    // A local SQLite home knows none of it.
    const local = await runCli(['keys', 'list', '--json'], { home: home(), env: { GATEWAY_DATABASE_URL: undefined, GATEWAY_REDIS_URL: undefined } });
    expect(JSON.parse(local.stdout)).toEqual([]);
  }, CLI_TEST_TIMEOUT_MS * 2);

  it('refuses the keychain, and a half-given team configuration, with what to do', async () => {
    const flags = ['--database', database, '--redis', redisServer.url];
    const keychain = await runCli([...flags, 'providers', 'add', 'anth', '--type', 'anthropic', '--key-stdin'], { home: home(), stdin: 'sk-ant-fake-0123456789' });
    expect(keychain.code).toBe(1);
    expect(keychain.stderr).toMatch(/team mode.*--key-env/s);
    const half = await runCli(['--database', database, 'keys', 'list'], { home: home(), env: { GATEWAY_REDIS_URL: undefined } });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--redis (or GATEWAY_REDIS_URL) is missing');
  }, CLI_TEST_TIMEOUT_MS);

  it('refuses a URL that is not one at once (exit 2, naming its flag), and never prints a password', async () => {
    const started = Date.now();
    const badPort = await runCli(['--database', database, '--redis', 'redis://:S3cretPW@127.0.0.1:notaport', 'keys', 'list'], { home: home() });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--redis is not a valid URL');
    expect(badPort.stderr).not.toContain('S3cretPW');
    // Before: the Redis client retried an unparseable port for 30 s.
    expect(Date.now() - started).toBeLessThan(CLI_TEST_TIMEOUT_MS);
    const pgPort = await runCli(['--database', 'postgres://gw:S3cretPW@127.0.0.1:99999/gateway', '--redis', redisServer.url, 'keys', 'list'], { home: home() });
    expect(pgPort.code).toBe(2);
    expect(pgPort.stderr).toContain('--database is not a valid URL');
    expect(pgPort.stderr).not.toContain('S3cretPW');
    const notDb = await runCli(['--database', database, '--redis', `${redisServer.url}/cache`, 'keys', 'list'], { home: home() });
    expect(notDb.code).toBe(2);
    // A password in the query string is masked like one in the user part.
    const query = new URL(database);
    query.searchParams.set('password', 'WrongQueryPW');
    query.port = String(Number(new URL(pgServer.url).port) + 1);
    const wrong = await runCli(['--database', query.toString(), '--redis', redisServer.url, 'keys', 'list'], { home: home() });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain('WrongQueryPW');
    expect(wrong.stderr).toContain('password=***');
  }, CLI_TEST_TIMEOUT_MS * 2);

  it('refuses a Redis database number the server does not have, rather than use database 0', async () => {
    const r = await runCli(['--database', database, '--redis', `${redisServer.url}/99`, 'keys', 'list'], { home: home() });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/DB index is out of range/i);
  }, CLI_TEST_TIMEOUT_MS);
});

/**
 * What admin tokens per person must do on any store, run against SQLite (test/admin) and against
 * PostgreSQL + Redis with several instances (test/team): the CLI prints a token once and stores only
 * its hash; every instance on the state accepts it on /admin/*; admin action lines name the person and
 * never carry a token; a revocation through the CLI is refused by every instance at once.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { RunningGateway } from '../../core/gateway/app.ts';
import type { AdminAction } from '../../core/admin/admin-action.ts';
import { adminActionLine } from '../../core/admin/admin-action.ts';
import { runCli } from './cli.ts';

export interface ContractSetup {
  /** CLI arguments that select the shared state (empty for the SQLite home). */
  flags: string[];
  /** A data home for the CLI (SQLite: the gateway's own). */
  cliHome: string;
  /** Instances on the same state. */
  gateways: RunningGateway[];
  /** Every stored admin_tokens row, as the store holds it. */
  storedRows(): Promise<Array<Record<string, unknown>>>;
}

const adminFetch = (g: RunningGateway, token: string, method = 'GET', path = '/admin/keys', body?: unknown) =>
  fetch(`${g.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

export async function adminTokensContract(s: ContractSetup): Promise<void> {
  const cli = (args: string[]) => runCli([...s.flags, ...args], { home: s.cliHome });

  const created = await cli(['admin-tokens', 'create', '--name', 'alice']);
  expect(created.code).toBe(0);
  const alice = created.stdout.trim();
  expect(alice).toMatch(/^gwadm-p-[A-Za-z0-9]{40}$/);
  expect(created.stderr).toContain('shown once');
  const bob = (await cli(['admin-tokens', 'create', '--name', 'bob'])).stdout.trim();
  expect(bob).toMatch(/^gwadm-p-/);
  const again = await cli(['admin-tokens', 'create', '--name', 'alice']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('already exists');
  expect((await cli(['admin-tokens', 'create', '--name', 'no spaces'])).code).toBe(2);
  expect((await cli(['admin-tokens', 'create', '--name', 'admin-token'])).code).toBe(1);

  // Hashed: the store holds the SHA-256 and a display prefix, never the token.
  const rows = await s.storedRows();
  expect(rows.map((r) => r.name).sort()).toEqual(['alice', 'bob']);
  expect(JSON.stringify(rows)).not.toContain(alice);
  expect(rows.find((r) => r.name === 'alice')?.hash).toBe(createHash('sha256').update(alice).digest('hex'));

  const listed = await cli(['admin-tokens', 'list', '--json']);
  expect(listed.code).toBe(0);
  expect(listed.stdout).not.toContain(alice);
  expect((JSON.parse(listed.stdout) as Array<{ name: string; prefix: string; revoked_at: string | null }>).map((t) => [t.name, t.revoked_at])).toEqual([
    ['alice', null],
    ['bob', null],
  ]);

  // Every instance honours it; a made-up token of the same shape is refused.
  const actions: AdminAction[] = [];
  for (const g of s.gateways) g.onAdminAction((a) => actions.push(a));
  for (const g of s.gateways) {
    const res = await adminFetch(g, alice);
    expect(res.status).toBe(200);
    await res.body?.cancel();
  }
  const forged = await adminFetch(s.gateways[0], `gwadm-p-${'A'.repeat(40)}`);
  expect(forged.status).toBe(401);
  expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('invalid_admin_token');

  // Admin actions name the person, on whichever instance they happen.
  const last = s.gateways[s.gateways.length - 1];
  const made = await adminFetch(last, alice, 'POST', '/admin/keys', { name: 'made-by-alice' });
  expect(made.status).toBe(201);
  await made.json();
  const byFile = await adminFetch(s.gateways[0], s.gateways[0].adminToken, 'POST', '/admin/keys', { name: 'made-by-owner' });
  expect(byFile.status).toBe(201);
  await byFile.json();
  // A dashboard session opened with bob's token acts as bob.
  const code = (await (await adminFetch(s.gateways[0], bob, 'POST', '/admin/login-codes')).json()) as { code: string };
  const session = (await (
    await fetch(`${s.gateways[0].url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: code.code }) })
  ).json()) as { token: string };
  const bySession = await adminFetch(s.gateways[0], session.token, 'POST', '/admin/keys', { name: 'made-by-bob' });
  expect(bySession.status).toBe(201);
  await bySession.json();
  await expect.poll(() => actions.filter((a) => a.path === '/admin/keys').length).toBe(3);
  const keyActions = actions.filter((a) => a.path === '/admin/keys').map((a) => [a.holder, a.method, a.status]);
  expect(keyActions).toEqual([
    ['alice', 'POST', 201],
    ['admin-token', 'POST', 201],
    ['bob', 'POST', 201],
  ]);
  expect(actions.map((a) => a.holder)).toContain('bob'); // the login-code request itself
  for (const a of actions) {
    const line = adminActionLine(a);
    expect(line).toContain(` admin ${a.holder} `);
    for (const secret of [alice, bob, session.token, s.gateways[0].adminToken]) expect(line).not.toContain(secret);
  }
  // Reads are not actions.
  expect(actions.every((a) => a.method !== 'GET')).toBe(true);

  // Alice opens a dashboard session and keeps a code for later: revoking her token ends both.
  const login = async (who: string) => ((await (await adminFetch(s.gateways[0], who, 'POST', '/admin/login-codes')).json()) as { code: string }).code;
  const trade = (code: string) => fetch(`${s.gateways[0].url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  const aliceSession = ((await (await trade(await login(alice))).json()) as { token: string }).token;
  const aliceLater = await login(alice);
  const before = await adminFetch(s.gateways[0], aliceSession);
  expect(before.status).toBe(200);
  await before.body?.cancel();

  // Revoked through the CLI: every instance refuses it on the next request; bob keeps working.
  const revoked = await cli(['admin-tokens', 'revoke', 'alice']);
  expect(revoked.code).toBe(0);
  const afterSession = await adminFetch(s.gateways[0], aliceSession);
  expect(afterSession.status).toBe(401);
  await afterSession.body?.cancel();
  const lateTrade = await trade(aliceLater);
  expect(lateTrade.status).toBe(401);
  await lateTrade.body?.cancel();
  // Bob's session, from a token still standing, goes on.
  const bobStill = await adminFetch(s.gateways[0], session.token);
  expect(bobStill.status).toBe(200);
  await bobStill.body?.cancel();
  for (const g of s.gateways) {
    const res = await adminFetch(g, alice);
    expect(res.status).toBe(401);
    await res.body?.cancel();
    const stillBob = await adminFetch(g, bob);
    expect(stillBob.status).toBe(200);
    await stillBob.body?.cancel();
  }
  expect((await cli(['admin-tokens', 'revoke', 'alice'])).code).toBe(1);
  const all = JSON.parse((await cli(['admin-tokens', 'list', '--all', '--json'])).stdout) as Array<{ name: string; revoked_at: string | null }>;
  expect(all.find((t) => t.name === 'alice')?.revoked_at).not.toBeNull();
  // The name is free again once revoked, and alice's new token works; what the revoked one opened stays ended
  // (a stolen laptop's session must not come back when its owner gets a new token).
  const reissued = await cli(['admin-tokens', 'create', '--name', 'alice']);
  expect(reissued.code).toBe(0);
  const fresh = await adminFetch(s.gateways[0], reissued.stdout.trim());
  expect(fresh.status).toBe(200);
  await fresh.body?.cancel();
  for (const g of s.gateways) {
    const old = await adminFetch(g, aliceSession);
    expect(old.status).toBe(401);
    await old.body?.cancel();
  }
  const revivedTrade = await trade(aliceLater);
  expect(revivedTrade.status).toBe(401);
  await revivedTrade.body?.cancel();
}

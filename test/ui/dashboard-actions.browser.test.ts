/**
 * Managing the gateway from the dashboard page, in headless Chromium against a real gateway, every
 * action confirmed by what the gateway then does (not by what the page says): the one-time sign-in link
 * (works once, leaves no code in the address bar); a key disabled in the page is refused within a
 * second and works again once enabled; edited limits are what the API reports; a rotated key's old
 * secret stops working and the new one works; a deleted key is refused; a provider added in the page
 * (an OpenAI fake whose key comes from an env var) serves a call, tests fine through the gateway, has
 * its models refreshed and its priority changed, and is gone once removed; the server-side search and
 * the CSV export; refused calls are not shown as "unpriced". Screenshots at 1440 and 390 px wide, with
 * no horizontal overflow of the page at 390 px.
 *
 * Without a launchable Chromium the suite is skipped, unless CI or GATEWAY_REQUIRE_BROWSER=1 is set.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { browserRequired, chromiumMissing, launchChromium, watchPageProblems } from '../support/browser.ts';

const { browser, launchProblem } = await launchChromium();

const FAKE_KEY_ENV = 'GW_UI_TEST_FAKE_OPENAI_KEY';
const FAKE_KEY = 'fake-openai-key-for-the-ui-test-0123456789';

describe.skipIf(browser === null && !browserRequired)('managing the gateway from the dashboard page', () => {
  let t: TestGateway;
  let upstream: FakeUpstream;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const shots = process.env.GATEWAY_UI_SHOTS ?? mkdtempSync(path.join(tmpdir(), 'gw-ui-actions-'));

  const admin = async <T>(p: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const r = await fetch(`${t.gw.url}${p}`, { ...init, headers: { authorization: `Bearer ${t.gw.adminToken}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: r.status, body: (await r.json()) as T };
  };
  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: t.gw.baseUrl, maxRetries: 0, timeout: 10_000 });
  /** The HTTP status a tiny chat call with this secret gets. */
  const statusWith = async (secret: string, model = 'demo-chat'): Promise<number> => {
    try {
      await client(secret).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      return 200;
    } catch (err) {
      return (err as { status?: number }).status ?? 0;
    }
  };
  /** Polls until the status is the wanted one, for at most `withinMs`; returns the time it took. */
  const becomes = async (secret: string, wanted: number, withinMs: number): Promise<number> => {
    const started = Date.now();
    let last = 0;
    while (Date.now() - started <= withinMs) {
      last = await statusWith(secret);
      if (last === wanted) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`still ${last} after ${withinMs} ms, wanted ${wanted}`);
  };
  const keyRow = (name: string) => page.locator(`[data-testid=key-row][data-id="${name}"]`);
  const providerRow = (name: string) => page.locator(`[data-testid=provider-row][data-id="${name}"]`);

  beforeAll(async () => {
    if (!browser) throw chromiumMissing(launchProblem);
    upstream = await startOpenAIUpstream({ requireKey: FAKE_KEY });
    process.env[FAKE_KEY_ENV] = FAKE_KEY;
    t = await startTestGateway({
      demo: true,
      keys: [
        { name: 'victim', budgetUsd: 1, budgetPeriod: 'monthly' },
        { name: 'rotating' },
        { name: 'doomed' },
      ],
    });
    await client(t.keys.victim).chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'a priced call' }] });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'light', acceptDownloads: true });
    page = await context.newPage();
    await watchPageProblems(page, problems);
  });

  afterAll(async () => {
    console.log(`dashboard action screenshots: ${shots}`);
    delete process.env[FAKE_KEY_ENV];
    await context?.close();
    await browser?.close();
    await t?.close();
    await upstream?.close();
  });

  it('signs in with a one-time link; the code leaves the address bar and works only once', async () => {
    const issued = await admin<{ code: string; path: string }>('/admin/login-codes', { method: 'POST' });
    expect(issued.status).toBe(201);
    expect(issued.body.path).toBe(`/ui/#login=${issued.body.code}`);
    await page.goto(`${t.gw.url}${issued.body.path}`);
    await page.getByTestId('spend-header').waitFor();
    expect(page.url()).not.toContain(issued.body.code);
    const session = (await page.evaluate("sessionStorage.getItem('gateway.adminToken')")) as string;
    expect(session).toMatch(/^gwsess-/);
    expect(session).not.toBe(t.gw.adminToken);
    // The session token is accepted by the admin API; the admin token never reached the page.
    const withSession = await fetch(`${t.gw.url}/admin/keys`, { headers: { authorization: `Bearer ${session}` } });
    expect(withSession.status).toBe(200);

    // The same link again, in a fresh tab: refused, with the way to get a new one.
    const other = await context.newPage();
    await other.goto(`${t.gw.url}${issued.body.path}`);
    await other.getByTestId('login-form').waitFor();
    expect(await other.getByRole('alert').textContent()).toContain('gateway ui');
    await other.close();
  });

  it('disables a key in the page: refused within a second; enabled again: it works', async () => {
    expect(await statusWith(t.keys.victim)).toBe(200);
    await page.goto(`${t.gw.url}/ui/#/keys`);
    await keyRow('victim').getByTestId('key-disable').click();
    const clicked = Date.now();
    const took = await becomes(t.keys.victim, 401, 1000);
    expect(Date.now() - clicked).toBeLessThanOrEqual(1500);
    expect(took).toBeLessThanOrEqual(1000);
    await expect.poll(() => keyRow('victim').getByTestId('key-state').textContent()).toBe('disabled');
    await page.screenshot({ path: path.join(shots, 'keys-1440.png'), fullPage: true });

    await keyRow('victim').getByTestId('key-enable').click();
    await becomes(t.keys.victim, 200, 1000);
    await expect.poll(() => keyRow('victim').getByTestId('key-state').textContent()).toBe('active');
  });

  it('edits a key\'s budget, period, limits and models: the API reports them and the allow-list holds', async () => {
    await keyRow('victim').getByTestId('key-edit').click();
    const form = page.getByTestId('edit-key-form');
    await form.locator('input[name=budget]').fill('2.5');
    await form.locator('select[name=period]').selectOption('daily');
    await form.locator('input[name=rpm]').fill('120');
    await form.locator('input[name=tpm]').fill('50000');
    await form.locator('input[name=models]').fill('demo-chat');
    await form.locator('button[type=submit]').click();
    await page.getByTestId('keys-message').filter({ hasText: 'Saved' }).waitFor();
    const k = await admin<{ budget_usd: number; budget_period: string; rpm: number; tpm: number; models: string[] }>('/admin/keys/victim');
    expect(k.body).toMatchObject({ budget_usd: 2.5, budget_period: 'daily', rpm: 120, tpm: 50000, models: ['demo-chat'] });
    // The list reloads after the save message: wait for the row, as for the state above.
    await expect.poll(() => keyRow('victim').textContent()).toMatch(/\/ \$2\.50 daily.*120 rpm, 50,000 tpm.*demo-chat/);
    // The allow-list is enforced by the gateway now.
    const refused = await client(t.keys.victim).embeddings.create({ model: 'demo-embedding', input: 'x' }).then(() => 200, (e: { status?: number }) => e.status);
    expect(refused).toBe(403);
  });

  it('rotates a key: the new secret is shown once and works, the old one stops working', async () => {
    const old = t.keys.rotating;
    expect(await statusWith(old)).toBe(200);
    await keyRow('rotating').getByTestId('key-rotate').click();
    await keyRow('rotating').getByTestId('key-rotate-confirm').click();
    const secret = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    expect(secret).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    expect(await page.getByTestId('new-key').textContent()).toContain('rotated');
    await becomes(old, 401, 1000);
    expect(await statusWith(secret)).toBe(200);
    await page.click('[data-testid=new-key] >> text=Done');
    expect(await page.content()).not.toContain(secret);
  });

  it('deletes a key after a confirmation: refused, and gone from the list', async () => {
    await keyRow('doomed').getByTestId('key-delete').click();
    expect(await statusWith(t.keys.doomed)).toBe(200); // nothing happens before the confirmation
    await keyRow('doomed').getByTestId('key-delete-confirm').click();
    await becomes(t.keys.doomed, 401, 1000);
    await expect.poll(() => keyRow('doomed').count()).toBe(0);
  });

  it('adds a provider whose key is an env var: it serves a call through the gateway', async () => {
    await page.goto(`${t.gw.url}/ui/#/providers`);
    const form = page.getByTestId('add-provider-form');
    await form.locator('input[name=name]').fill('fake-openai');
    await form.locator('select[name=type]').selectOption('openai');
    await form.locator('input[name=base_url]').fill(upstream.url);
    await form.locator('input[name=key_env]').fill(FAKE_KEY_ENV);
    await form.locator('button[type=submit]').click();
    await page.getByTestId('provider-result').filter({ hasText: 'Added "fake-openai"' }).waitFor();
    expect(await page.getByTestId('provider-result').textContent()).toContain('4 models');
    await providerRow('fake-openai').waitFor();

    // A key allowed any model: the call goes to the new provider, with the key from the env var.
    const created = await admin<{ key: string }>('/admin/keys', { method: 'POST', body: JSON.stringify({ name: 'caller' }) });
    const { data, response } = await client(created.body.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'through the new provider' }] }).withResponse();
    expect(response.headers.get('x-gateway-provider')).toBe('fake-openai');
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(upstream.requests.some((r) => r.path === '/v1/chat/completions' && r.headers.authorization === `Bearer ${FAKE_KEY}`)).toBe(true);
  });

  it('tests, refreshes and re-prioritises that provider, then removes it', async () => {
    const before = upstream.requests.length;
    await providerRow('fake-openai').getByTestId('provider-test').click();
    await page.getByTestId('provider-result').filter({ hasText: 'fake-openai: works' }).waitFor();
    expect(upstream.requests.slice(before).some((r) => r.path === '/v1/chat/completions')).toBe(true);

    upstream.options.models = ['gpt-4o', 'gpt-4o-mini', 'zz-unpriced-model'];
    await providerRow('fake-openai').getByTestId('provider-refresh').click();
    await page.getByTestId('provider-result').filter({ hasText: 'fake-openai: 3 models' }).waitFor();
    const listed = await admin<{ providers: Array<{ name: string; models: string[]; priority: number }> }>('/admin/providers');
    expect(listed.body.providers.find((p) => p.name === 'fake-openai')?.models).toContain('zz-unpriced-model');

    await providerRow('fake-openai').locator('input[name=priority]').fill('5');
    await providerRow('fake-openai').getByTestId('provider-priority-save').click();
    await page.getByTestId('provider-result').filter({ hasText: 'priority 5' }).waitFor();
    const after = await admin<{ providers: Array<{ name: string; priority: number }> }>('/admin/providers');
    expect(after.body.providers[0]).toMatchObject({ name: 'fake-openai', priority: 5 });

    // A successful call to a model without a price: "unpriced" in the log and in spend, never $0.00.
    const callerKey = await admin<{ key: string }>('/admin/keys', { method: 'POST', body: JSON.stringify({ name: 'unpriced-caller' }) });
    const unpriced = await client(callerKey.body.key).chat.completions.create({ model: 'zz-unpriced-model', messages: [{ role: 'user', content: 'no price for me' }] }).withResponse();
    expect(unpriced.response.status).toBe(200);

    // The latency chart has this provider's attempts.
    await page.reload();
    await page.locator('[data-testid=provider-chart][data-provider="fake-openai"]').waitFor();
    await page.screenshot({ path: path.join(shots, 'providers-1440.png'), fullPage: true });

    await providerRow('fake-openai').getByTestId('provider-remove').click();
    await providerRow('fake-openai').getByTestId('provider-remove-confirm').click();
    await expect.poll(() => providerRow('fake-openai').count()).toBe(0);
    const created = await admin<{ key: string }>('/admin/keys', { method: 'POST', body: JSON.stringify({ name: 'caller-2' }) });
    expect(await statusWith(created.body.key, 'gpt-4o-mini')).toBe(404);
  });

  it('searches the log on the server and exports the result as CSV', async () => {
    await page.goto(`${t.gw.url}/ui/#/logs`);
    await page.getByTestId('log-filters').locator('select[name=status]').selectOption('401');
    await page.getByTestId('search-count').waitFor();
    const expected = await admin<{ calls: Array<{ id: string; status: number; cost_usd: number | null }> }>('/admin/logs/search?status=401');
    expect(expected.body.calls.length).toBeGreaterThanOrEqual(3);
    const rows = page.getByTestId('log-row');
    await expect.poll(() => rows.count()).toBe(expected.body.calls.length);
    expect(await rows.first().getAttribute('data-id')).toBe(expected.body.calls[0]?.id);
    // Refused calls cost nothing, and are not "unpriced".
    const costs = await page.locator('[data-testid=log-row] .cost').allTextContents();
    expect(costs.every((c) => c === '—')).toBe(true);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    const csv = readFileSync((await download.path()) ?? '', 'utf8').trim().split(/\r\n/);
    expect(csv[0]?.startsWith('id,time,key,endpoint,model_requested,model,provider,status')).toBe(true);
    expect(csv.length - 1).toBe(expected.body.calls.length);
    expect(csv.slice(1).every((line) => line.split(',')[7] === '401')).toBe(true);

    await page.getByTestId('log-filters').locator('select[name=status]').selectOption('');
    await page.getByTestId('log-filters').locator('input[name=q]').fill('gpt-4o-mini');
    await expect.poll(async () => (await rows.allTextContents()).every((r) => r.includes('gpt-4o-mini')) && (await rows.count()) > 0).toBe(true);
    await page.getByTestId('log-filters').locator('input[name=q]').fill('zz-unpriced');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator('.cost').textContent()).toBe('unpriced');
    await page.getByTestId('log-filters').locator('input[name=q]').fill('gpt-4o-mini');
    await expect.poll(async () => (await rows.allTextContents()).every((r) => r.includes('gpt-4o-mini'))).toBe(true);
    await page.screenshot({ path: path.join(shots, 'requests-1440.png'), fullPage: true });

    // Spend by model: the unpriced model says so; the refused calls' rows are no "unpriced".
    await page.goto(`${t.gw.url}/ui/#/spend`);
    const byModel = page.getByTestId('usage-by-model');
    const unpricedRow = byModel.locator('tbody tr[data-id="zz-unpriced-model"]');
    await unpricedRow.waitFor();
    expect(await unpricedRow.locator('td').last().textContent()).toBe('unpriced');
    expect(await byModel.locator('tbody tr[data-id="(none)"] td').last().textContent()).toBe('$0.00');
  });

  it('fits a 390 px wide screen: no sideways page overflow; tables scroll inside their cards', async () => {
    const phone = await browser!.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, colorScheme: 'light' });
    try {
      const p = await phone.newPage();
      const issued = await admin<{ path: string }>('/admin/login-codes', { method: 'POST' });
      await p.goto(`${t.gw.url}${issued.body.path}`);
      await p.getByTestId('spend-header').waitFor();
      for (const view of ['spend', 'logs', 'keys', 'providers']) {
        await p.goto(`${t.gw.url}/ui/#/${view}`);
        await p.getByTestId(`${view}-view`).waitFor();
        await p.waitForTimeout(300);
        await p.screenshot({ path: path.join(shots, `${view}-390.png`), fullPage: true });
        const overflow = (await p.evaluate('document.documentElement.scrollWidth')) as number;
        expect(overflow, `${view} at 390 px`).toBeLessThanOrEqual(390);
      }
      // Chart labels are drawn at their real size (12 px), not scaled down.
      await p.goto(`${t.gw.url}/ui/#/spend`);
      const label = p.locator('[data-testid=day-chart] text.axis-label').first();
      const box = await label.boundingBox();
      expect(box?.height ?? 0).toBeGreaterThanOrEqual(10);
    } finally {
      await phone.close();
    }
    await page.goto(`${t.gw.url}/ui/#/spend`);
    await page.getByTestId('spend-view').waitFor();
    await page.locator('[data-testid=day-chart] rect.bar').first().waitFor({ state: 'attached' });
    await page.screenshot({ path: path.join(shots, 'spend-1440.png'), fullPage: true });
  });

  it('raised no script error and no CSP violation', async () => {
    expect(await page.evaluate('window.cspViolations')).toEqual([]);
    expect(problems).toEqual([]);
  });
});

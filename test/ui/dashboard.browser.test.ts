/**
 * The dashboard page in headless Chromium (Debian's `chromium`, driven by playwright-core) against a real
 * gateway with the demo provider: sign-in with the admin token (a wrong one refused), the spend header,
 * the spend views, the request log (with a call made after the page loaded arriving over the live
 * stream), a request's detail, key creation (the secret shown once, and it works), providers; and no
 * CSP violation or script error along the way. Screenshots go to a temp folder (path printed).
 *
 * Without a launchable Chromium the suite is skipped, unless CI or GATEWAY_REQUIRE_BROWSER=1 is set:
 * then it fails. CHROMIUM_PATH overrides /usr/bin/chromium.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { browserRequired, chromiumMissing, launchChromium, watchPageProblems } from '../support/browser.ts';

const { browser, launchProblem } = await launchChromium();

interface Snapshot {
  spend: { today_usd: number; month_usd: number };
}

/** The page's own money format (app.js fmtUsd). */
function fmtUsd(v: number): string {
  if (v === 0) return '$0.00';
  const a = Math.abs(v);
  return '$' + (a >= 1 ? v.toFixed(2) : a >= 0.01 ? v.toFixed(4) : v.toFixed(6));
}

describe.skipIf(browser === null && !browserRequired)('the dashboard page in headless Chromium', () => {
  let t: TestGateway;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const shots = mkdtempSync(path.join(tmpdir(), 'gw-ui-shots-'));

  const admin = async <T>(p: string): Promise<T> => {
    const r = await fetch(`${t.gw.url}${p}`, { headers: { authorization: `Bearer ${t.gw.adminToken}` } });
    expect(r.status).toBe(200);
    return (await r.json()) as T;
  };
  const chat = async (keyName: string, text: string, stream = false): Promise<string> => {
    const client = t.client({ apiKey: t.keys[keyName] });
    if (stream) {
      const { data, response } = await client.chat.completions.create({ model: 'demo-chat', max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }).withResponse();
      for await (const _ of data) {
        /* drain */
      }
      return response.headers.get('x-request-id') ?? '';
    }
    const { response } = await client.chat.completions.create({ model: 'demo-chat', max_tokens: 20, messages: [{ role: 'user', content: text }] }).withResponse();
    return response.headers.get('x-request-id') ?? '';
  };

  beforeAll(async () => {
    if (!browser) throw chromiumMissing(launchProblem);
    t = await startTestGateway({
      demo: true,
      keys: [
        { name: 'script', budgetUsd: 0.0001, budgetPeriod: 'daily' },
        { name: 'agent', rpm: 600 },
      ],
    });
    await chat('script', 'hello from a script');
    await chat('script', 'a second question, streamed', true);
    await chat('agent', 'what is the weather like today');
    await t
      .client({ apiKey: t.keys.agent })
      .chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch(() => undefined);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    await watchPageProblems(page, problems);
  });

  afterAll(async () => {
    console.log(`dashboard screenshots: ${shots}`);
    await context?.close();
    await browser?.close();
    await t?.close();
  });

  it('asks for the admin token, refuses a wrong one, and opens with the right one', async () => {
    await page.goto(`${t.gw.url}/ui`);
    await page.getByTestId('login-form').waitFor();
    await page.fill('#token', 'gwadm-not-the-token-at-all-0000000000');
    await page.click('button[type=submit]');
    await page.getByRole('alert').filter({ hasText: 'not the admin token' }).waitFor();
    await page.screenshot({ path: path.join(shots, '0-sign-in.png') });
    await page.fill('#token', t.gw.adminToken);
    await page.click('button[type=submit]');
    await page.getByTestId('spend-header').waitFor();
    expect(page.url()).not.toContain(t.gw.adminToken);
    expect(await page.evaluate("sessionStorage.getItem('gateway.adminToken')")).toBe(t.gw.adminToken);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('shows spend today and this month in the header', async () => {
    const snap = await admin<Snapshot>('/admin/snapshot');
    expect(snap.spend.today_usd).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('spend-today').textContent()).toBe(fmtUsd(snap.spend.today_usd));
    expect(await page.getByTestId('spend-month').textContent()).toBe(fmtUsd(snap.spend.month_usd));
    await expect.poll(() => page.getByTestId('live-state').textContent()).toBe('live');
  });

  it('shows spend by day (a bar for today), by key and by model', async () => {
    await page.getByTestId('spend-view').waitFor();
    const d = new Date();
    const today = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    const bar = page.locator(`[data-testid=day-chart] rect.bar[data-day="${today}"]`);
    await bar.waitFor();
    expect(Number(await bar.getAttribute('height'))).toBeGreaterThan(10);
    const byKey = page.getByTestId('usage-by-key');
    await expect.poll(() => byKey.locator('tbody tr').count()).toBe(2);
    expect(await byKey.locator('tbody tr').first().textContent()).toMatch(/^script2/);
    expect(await byKey.locator('tbody').textContent()).toContain('agent');
    expect(await page.getByTestId('usage-by-model').locator('tbody').textContent()).toContain('demo-chat');
    await page.screenshot({ path: path.join(shots, '1-spend.png'), fullPage: true });
  });

  it('lists the calls newest first, and a call made now arrives over the live stream', async () => {
    await page.click('nav.tabs >> text=Requests');
    const rows = page.getByTestId('log-row');
    await expect.poll(() => rows.count()).toBe(4);
    expect(await rows.first().textContent()).toContain('no-such-model');
    expect(await rows.first().textContent()).toContain('404');

    const id = await chat('agent', 'a call made after the page loaded');
    expect(id).not.toBe('');
    const row = page.locator(`[data-testid=log-row][data-id="${id}"]`);
    await row.waitFor({ timeout: 5_000 });
    expect(await rows.count()).toBe(5);
    expect(await rows.first().getAttribute('data-id')).toBe(id);
    expect(await row.textContent()).toContain('demo-chat');
    expect(await row.textContent()).toContain('agent');
    // The header follows the new spend too.
    const snap = await admin<Snapshot>('/admin/snapshot');
    await expect.poll(() => page.getByTestId('spend-today').textContent()).toBe(fmtUsd(snap.spend.today_usd));
    await page.screenshot({ path: path.join(shots, '2-requests.png'), fullPage: true });

    await row.click();
    const detail = page.getByTestId('log-detail');
    await detail.waitFor();
    expect(page.url()).toContain(`#/logs/${id}`);
    const attempts = page.getByTestId('attempts-table').locator('tbody tr');
    await expect.poll(() => attempts.count()).toBe(1);
    expect(await attempts.first().textContent()).toMatch(/demo.*demo-chat.*200/);
    expect(await page.getByTestId('request-body').textContent()).toContain('a call made after the page loaded');
    expect(await page.getByTestId('response-body').textContent()).toContain('Demo reply to: a call made after the page loaded');
    expect(await detail.textContent()).toContain('priced');
    await page.screenshot({ path: path.join(shots, '3-detail.png'), fullPage: true });
    await page.goBack();
    await page.getByTestId('logs-view').waitFor();
  });

  it('lists keys with budget bars, and creates a key whose secret is shown once and works', async () => {
    await page.click('nav.tabs >> text=Keys');
    const rows = page.getByTestId('key-row');
    await expect.poll(() => rows.count()).toBe(2);
    const script = page.locator('[data-testid=key-row][data-id="script"]');
    expect(await script.locator('.fill').count()).toBe(1);
    expect(await script.textContent()).toContain('daily');

    await page.fill('[data-testid=create-key-form] input[name=name]', 'from-ui');
    await page.fill('[data-testid=create-key-form] input[name=budget]', '5');
    await page.selectOption('[data-testid=create-key-form] select[name=period]', 'monthly');
    await page.fill('[data-testid=create-key-form] input[name=rpm]', '60');
    await page.click('[data-testid=create-key-form] button[type=submit]');
    const secret = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    expect(secret).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    await page.locator('[data-testid=key-row][data-id="from-ui"]').waitFor();
    expect(await page.locator('[data-testid=key-row][data-id="from-ui"]').textContent()).toMatch(/\$0\.00 \/ \$5\.00 monthly.*60 rpm/);
    await page.screenshot({ path: path.join(shots, '4-keys.png'), fullPage: true });

    // The secret works against /v1, and is gone from the page after "Done".
    const models = await t.client({ apiKey: secret }).models.list();
    expect(models.data.map((m) => m.id)).toContain('demo-chat');
    await page.click('[data-testid=new-key] >> text=Done');
    expect(await page.getByTestId('new-key-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // A duplicate name is refused with the API's message.
    await page.fill('[data-testid=create-key-form] input[name=name]', 'from-ui');
    await page.click('[data-testid=create-key-form] button[type=submit]');
    const refused = page.locator('[data-testid=create-key-form] [role=alert]');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('from-ui');
  });

  it('lists providers with health and model counts', async () => {
    await page.click('nav.tabs >> text=Providers');
    const row = page.locator('[data-testid=provider-row][data-id="demo"]');
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('healthy');
    expect(text).toContain('2 models');
    await page.screenshot({ path: path.join(shots, '5-providers.png'), fullPage: true });
  });

  it('keeps the session across a reload, and signs out', async () => {
    await page.reload();
    await page.getByTestId('spend-header').waitFor();
    const held = (await page.evaluate("sessionStorage.getItem('gateway.adminToken')")) as string | null;
    await page.click('header >> text=Sign out');
    await page.getByTestId('login-form').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('gateway.adminToken')")).toBeNull();
    // A session signed out of is ended on the server too: a copy of its token is refused.
    if (held?.startsWith('gwsess-')) {
      await expect.poll(async () => (await fetch(`${t.gw.url}/admin/snapshot`, { headers: { authorization: `Bearer ${held}` } })).status).toBe(401);
    }
  });

  it('asks for no token when the window adds the Authorization header itself (the Electron tray)', async () => {
    const electronLike = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await electronLike.newPage();
      // Like desktop/src/dashboard-auth.ts: the header is added to /admin/ requests only, outside the page.
      await p.route('**/admin/**', (route) => route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${t.gw.adminToken}` } }));
      await p.goto(`${t.gw.url}/ui#/logs`);
      await p.getByTestId('spend-header').waitFor();
      expect(await p.getByTestId('login-form').count()).toBe(0);
      expect(await p.evaluate("sessionStorage.getItem('gateway.adminToken')")).toBeNull();
      expect(await p.locator('header >> text=Sign out').count()).toBe(0);
      await expect.poll(() => p.getByTestId('live-state').textContent()).toBe('live');
      const id = await chat('agent', 'seen by the tray window');
      await p.locator(`[data-testid=log-row][data-id="${id}"]`).waitFor({ timeout: 5_000 });
    } finally {
      await electronLike.close();
    }
  });

  it('raised no script error and no CSP violation', async () => {
    expect(await page.evaluate('window.cspViolations')).toEqual([]);
    expect(problems).toEqual([]);
  });
});

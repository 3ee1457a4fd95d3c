/**
 * Headless Chromium for the dashboard's browser tests: launched once per file, skipped when the machine has
 * none (required on CI or with GATEWAY_REQUIRE_BROWSER=1), and a page watcher that collects what went wrong.
 */
import type { Browser, Page } from 'playwright-core';

export const browserRequired = Boolean(process.env.CI) || process.env.GATEWAY_REQUIRE_BROWSER === '1';
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Chromium, or null and the first line of why it could not be launched. */
export async function launchChromium(): Promise<{ browser: Browser | null; launchProblem: string }> {
  try {
    const { chromium } = await import('playwright-core');
    return { browser: await chromium.launch({ executablePath, args: ['--no-sandbox'], headless: true, timeout: 30_000 }), launchProblem: '' };
  } catch (err) {
    return { browser: null, launchProblem: err instanceof Error ? err.message.split('\n')[0] : String(err) };
  }
}

/** The error a test that needs Chromium throws when it could not be launched. */
export const chromiumMissing = (launchProblem: string): Error =>
  new Error(`Chromium could not be launched from ${executablePath} (${launchProblem}); install it with \`apt-get install -y chromium\` or set CHROMIUM_PATH.`);

/**
 * Pushes the page's uncaught errors and console errors into `problems`, and counts CSP violations in
 * `window.cspViolations` (in the page itself: init scripts are not subject to the page's CSP).
 */
export async function watchPageProblems(page: Page, problems: string[]): Promise<void> {
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // A wrong token (401) and a refused form (400) are provoked on purpose: Chromium logs those as failed
    // resource loads. Anything else logged as an error is a problem.
    if (msg.type() === 'error' && !/Failed to load resource: the server responded with a status of 40[01]\b/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  await page.addInitScript({
    content: "window.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));",
  });
}

/**
 * A headless Chromium for the web chat tests, driven by playwright-core at the system's browser
 * (nothing is downloaded): one per test file, a fresh profile, no background traffic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core';
import { WAIT_MS } from './budgets.js';
import { chromiumPath } from './system-tools.js';

/** A launched browser and a cleanup that also removes its profile. */
export interface TestBrowser {
  browser: Browser;
  /**
   * A new context whose every action and wait is one step ({@link WAIT_MS}), like `waitFor`'s,
   * instead of Playwright's 30 s default: a test's timeout can then be the sum of its steps, and a
   * slow step fails at the locator that names it, not at the test's anonymous timeout.
   */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** Launch the system's Chromium headless with a throw-away profile. */
export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium found');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'sb-chromium-'));
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    // playwright gives every launch a fresh --user-data-dir of its own (it refuses one passed in
    // args); the temporary folder is where it is put, removed on close.
    env: { ...process.env, TMPDIR: profile },
  });
  return {
    browser,
    async context(options) {
      const ctx = await browser.newContext(options);
      ctx.setDefaultTimeout(WAIT_MS);
      ctx.setDefaultNavigationTimeout(WAIT_MS);
      return ctx;
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}

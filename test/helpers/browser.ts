/**
 * A headless Chromium for the web chat tests, driven by playwright-core at the system's browser
 * (nothing is downloaded): one per test file, a fresh profile, no background traffic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { chromiumPath } from './system-tools.js';

/** A launched browser and a cleanup that also removes its profile. */
export interface TestBrowser {
  browser: Browser;
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
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}

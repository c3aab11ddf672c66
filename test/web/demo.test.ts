/**
 * `switchboard start --demo` with no model key: the web chat in a real headless Chromium says it
 * is a scripted demo, and the built-in scripted model brings an approval card (approving it writes
 * the file) and a question card (a suggested answer reaches the model) through the real engine.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { killLeftRunning, type StartedProcess, startProcess, writeConfig } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { deleteSessions } from '../../src/store/repos/web.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';

const noBrowser = skipReason('chromium', 'the web demo test drives a real browser');

describe.skipIf(noBrowser !== undefined)(`start --demo in the web chat${skipped(noBrowser)}`, () => {
  let dir: string;
  const procs: StartedProcess[] = [];
  let b: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-webdemo-'));
    // No key and no endpoint: only the scripted demo model can answer.
    const env = {
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      SWITCHBOARD_MODEL: '',
      TELEGRAM_BOT_TOKEN: '',
      SLACK_BOT_TOKEN: '',
      SWITCHBOARD_CONFIG: writeConfig(dir),
      DATABASE_URL: testDatabaseUrl(dir, 'db'),
      SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    };
    const proc = await startProcess(env, 60_000, { args: ['--demo'] });
    procs.push(proc);
    const link = await waitFor(
      () => proc.logs.map((l) => /^Web chat: (\S+)/.exec(String(l.msg))?.[1]).find(Boolean),
      'the login link',
    );
    expect(
      proc.logs.some((l) => String(l.msg).startsWith('DEMO: every chat answers from a small scripted model')),
    ).toBe(true);
    b = await launchBrowser();
    page = await (await b.browser.newContext({ viewport: { width: 900, height: 720 } })).newPage();
    await page.goto(link);
    await page.getByRole('textbox', { name: 'Message' }).waitFor({ state: 'visible' });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await killLeftRunning(procs);
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function say(text: string): Promise<void> {
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill(text);
    await box.press('Enter');
    await page.getByRole('article', { name: 'You' }).filter({ hasText: text }).waitFor();
  }

  it('the page says it is a scripted demo, not a model', async () => {
    await page.getByRole('note').filter({ hasText: '[demo] a scripted model, not an LLM' }).waitFor();
    await page.getByText('This is the demo: the answers come from a small script').waitFor();
  });

  it('an approval card from the scripted model; Approve writes the file', async () => {
    await say('write a file');
    const card = page.getByRole('article', { name: 'Approval: write_file demo.txt' });
    for (const name of ['Approve', 'Deny', 'This session'])
      await card.getByRole('button', { name, exact: true }).waitFor();
    expect(existsSync(path.join(dir, 'ws', 'demo.txt'))).toBe(false);
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.getByText('Approved once by web:operator').waitFor();
    await page
      .getByRole('article', { name: 'switchboard' })
      .filter({ hasText: '[demo] The write_file call came back with' })
      .waitFor();
    expect(readFileSync(path.join(dir, 'ws', 'demo.txt'), 'utf8')).toBe(
      'Written by the switchboard demo after you approved it.\n',
    );
  }, 60_000);

  it('a question card from the scripted model; a suggested answer reaches it', async () => {
    await say('ask me something');
    const card = page.getByRole('article', { name: 'Question' });
    await card.getByText('Which colour should the demo use?').waitFor();
    await card.getByRole('button', { name: 'green' }).click();
    await page
      .getByRole('article', { name: 'switchboard' })
      .filter({ hasText: '[demo] You answered: green' })
      .waitFor();
  }, 60_000);

  it('a refusal shown on the page names its command as code, not between backticks', async () => {
    // The session ends under the open page: the next message is refused with how to sign in again.
    const db = openTestDatabase(dir, 'db');
    try {
      expect(await deleteSessions(db, 'operator')).toBeGreaterThan(0);
    } finally {
      await db.destroy();
    }
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('still there?');
    await box.press('Enter');
    const note = page.getByRole('status').filter({ hasText: 'not signed in' });
    await note.locator('code', { hasText: 'switchboard web link' }).waitFor();
    expect(await note.textContent()).not.toContain('`');
  }, 60_000);
});

/**
 * The web chat in a real headless Chromium against a real `switchboard start` child and the
 * scripted model, finding the page's parts by role and accessible name (CONTRACT.md, "Web chat
 * and operator console"): login once only, 401s, a streamed answer, approvals (approve, deny with
 * a note, another tab updating), questions (button and free text), Stop, files both ways, SIGKILL +
 * restart + reload, CSRF, /admin for admins only, and an XSS corpus that executes nothing.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../src/channels/web/auth.js';
import type { Db } from '../../src/store/db.js';
import { startScriptedLlm, type ScriptedLlm, type ScriptedStep } from '../emulators/llm.js';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { budget, CHILD_START_MS, times, WAIT_MS } from '../helpers/budgets.js';
import { waitFor } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { openTestDatabase } from '../helpers/test-db.js';

const noBrowser = skipReason('chromium', 'the web chat tests drive a real browser');
/**
 * Where the suite leaves its screenshot (gitignored; docs/web-chat.png is a copy, taken with only
 * the sign-in before it: `npx vitest run test/web/browser.test.ts -t "signs in once|README screenshot"`).
 */
const SHOT = path.resolve(import.meta.dirname, '../../test-output/web-chat.png');

/** The text of the newest user message the model was sent, and the last message. */
function lastUser(body: any): { user: string; last: any } {
  const msgs = body.messages as any[];
  const user = [...msgs].reverse().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
  return { user: text, last: msgs.at(-1) };
}

/** An answer with code in it (the screenshot's). */
const CODE = [
  'Here is a small helper:',
  '',
  '```ts',
  '// retries a call with backoff',
  'export async function retry<T>(fn: () => Promise<T>, times = 3): Promise<T> {',
  '  for (let i = 0; ; i++) {',
  '    try { return await fn(); }',
  '    catch (err) { if (i >= times) throw err; }',
  '    await new Promise((r) => setTimeout(r, 2 ** i * 100));',
  '  }',
  '}',
  '```',
].join('\n');

const LONG = `Streaming answer: ${Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')} THE END`;
const XSS = [
  'Corpus:',
  '<script>window.__xss = 1</script>',
  '<img src="x" onerror="window.__xss = 2">',
  '[click me](javascript:window.__xss=3)',
  '```html\n<script>window.__xss = 4</script>\n```',
  '<svg onload="window.__xss = 5"><script>window.__xss = 6</script></svg>',
  '<a href="JaVaScRiPt:window.__xss=7">sneaky</a> and [fine](https://example.org)',
].join('\n\n');

/** Holds the first token of "slow please" until the test has seen the thinking indicator. */
let openGate: () => void = () => {};
let gate = new Promise<void>((resolve) => {
  openGate = resolve;
});

/** The scripted model: what it does depends on a keyword in the user's message. */
function model(body: any): ScriptedStep {
  const { user, last } = lastUser(body);
  const after = last?.role === 'tool' ? String(last.content) : null;
  const call = (name: string, args: unknown): ScriptedStep => ({
    toolCalls: [{ name, arguments: JSON.stringify(args) }],
  });
  if (user.includes('stream please')) return { text: LONG, chunkSize: 6, delayMs: 60 };
  if (user.includes('write please'))
    return after === null
      ? call('write_file', { path: 'approved.txt', content: 'approved' })
      : { text: `Written: ${after.slice(0, 60)}` };
  if (user.includes('deny please'))
    return after === null
      ? call('write_file', { path: 'denied.txt', content: 'no' })
      : { text: 'Understood, I will not.' };
  if (user.includes('restart please'))
    return after === null
      ? call('write_file', { path: 'restart.txt', content: 'after restart' })
      : { text: 'Done after the restart.' };
  if (user.includes('ask please'))
    return after === null
      ? call('ask_user_clarification', { question: 'Which colour?', suggested_answers: ['Red', 'Blue'] })
      : { text: `You chose: ${after}` };
  if (user.includes('send me a file'))
    return after === null ? call('send_attachment', { path: 'report.txt', caption: 'the report' }) : { text: 'Sent.' };
  if (user.includes('code please')) return { text: CODE };
  if (user.includes('look please'))
    return after === null
      ? call('read_file', { path: 'report.txt' })
      : { text: 'The report has the quarterly numbers.' };
  if (user.includes('slow please')) return { text: 'Here at last.', pauses: [{ afterChars: 0, until: gate }] };
  if (user.includes('hang please')) return { hang: true, text: 'Thinking' };
  if (user.includes('xss please')) return { text: XSS };
  if (user.includes('uploads/')) return { text: 'I got your file.' };
  return { text: 'ok' };
}

/**
 * The timeout of a test of `n` browser steps: every action and wait of a {@link TestBrowser.context}
 * is one {@link WAIT_MS} step, so the test's budget is derived from how many it takes (counted in
 * each test's options). Two tests timed out at the suite's 20 s default while one Playwright wait
 * alone allowed 30 s.
 */
const steps = (n: number) => ({ timeout: budget(...times(n, WAIT_MS)) });

describe.skipIf(noBrowser !== undefined)(`web chat in a browser${skipped(noBrowser)}`, () => {
  let llm: ScriptedLlm;
  let dir: string;
  let env: Record<string, string>;
  let proc: StartedProcess;
  let base: string;
  let operatorLink: string;
  let b: TestBrowser;
  let operator: BrowserContext;
  let page: Page;
  /** The child's database, opened once for the links (each opening costs a pool of connections). */
  let db: Db | undefined;

  /**
   * Start (or restart) the child; returns its base URL. Two start-up waits: the "switchboard
   * started" line, then the login link it logs with the web chat's start.
   */
  async function start(): Promise<string> {
    proc = await startProcess(env);
    await waitFor(
      () => proc.logs.some((l) => String(l.msg).startsWith('Web chat: ')),
      'the login link',
      CHILD_START_MS,
    );
    const started = proc.logs.find((l) => l.msg === 'switchboard started');
    operatorLink = String(proc.logs.find((l) => String(l.msg).startsWith('Web chat: '))!.msg).slice(
      'Web chat: '.length,
    );
    return `http://127.0.0.1:${started!.port}`;
  }

  /** A one-time link made the way `switchboard web link` makes it (same database). */
  async function link(user: string, admin = false): Promise<string> {
    db ??= openTestDatabase(dir, 'db');
    return (await createLoginLink(db, base, { user, admin, ttlMinutes: 5 })).url;
  }

  /** Open a new conversation and send a message with Enter. */
  async function ask(p: Page, text: string): Promise<void> {
    await p.getByRole('button', { name: 'New conversation' }).click();
    const box = p.getByRole('textbox', { name: 'Message' });
    await box.fill(text);
    await box.press('Enter');
    await p.getByRole('article', { name: 'You' }).filter({ hasText: text }).waitFor();
  }

  const toolResults = (name: string) =>
    llm
      .chatRequests()
      .flatMap((r) =>
        (r.body.messages as any[]).filter(
          (m) =>
            m.role === 'tool' &&
            String(m.content).length > 0 &&
            r.body.messages.some((x: any) =>
              x.tool_calls?.some((c: any) => c.id === m.tool_call_id && c.function.name === name),
            ),
        ),
      );

  beforeAll(
    async () => {
      llm = await startScriptedLlm();
      llm.setHandler(model);
      dir = mkdtempSync(path.join(os.tmpdir(), 'sb-webui-'));
      env = childEnv(dir, llm.url, '', { TELEGRAM_BOT_TOKEN: '', SLACK_BOT_TOKEN: '' });
      mkdirSync(path.join(dir, 'ws'), { recursive: true });
      writeFileSync(path.join(dir, 'ws', 'report.txt'), 'quarterly numbers\n');
      // Both are child processes that start on their own: side by side, not one after the other.
      [base, b] = await Promise.all([start(), launchBrowser()]);
      operator = await b.context({ viewport: { width: 900, height: 720 } });
      page = await operator.newPage();
      page.on('dialog', (d) => {
        throw new Error(`a dialog opened: ${d.message()}`);
      });
    },
    // The child's two start-up waits, and Chromium's launch (a child process too).
    budget(...times(3, CHILD_START_MS)),
  );

  afterAll(async () => {
    await b?.close();
    await proc?.stop();
    await db?.destroy();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  it('a login link signs in once; used again it is refused', async () => {
    const res = await page.goto(operatorLink);
    expect(res?.url()).toBe(`${base}/`);
    // The page draws itself after load: wait for the box to be shown (this fails if it never is).
    await page.getByRole('textbox', { name: 'Message' }).waitFor({ state: 'visible' });
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: 'New conversation' })
      .waitFor();
    const other = await b.context();
    const p2 = await other.newPage();
    const again = await p2.goto(operatorLink);
    expect(again?.status()).toBe(403);
    await p2.getByRole('heading', { name: 'Link not valid' }).waitFor();
    expect(await p2.getByRole('textbox', { name: 'Message' }).count()).toBe(0);
    await other.close();
  });

  it('without a session: the login page, and 401 for API and stream requests', async () => {
    const anon = await b.context();
    const p = await anon.newPage();
    const res = await p.goto(`${base}/`);
    expect(res?.status()).toBe(401);
    await p.getByRole('heading', { name: 'Sign in' }).waitFor();
    const statuses = await p.evaluate(async () =>
      Promise.all(['/api/session', '/api/stream', '/api/status'].map(async (u) => (await fetch(u)).status)),
    );
    expect(statuses).toEqual([401, 401, 401]);
    await anon.close();
  });

  it('streams the answer: partial text is shown before the final one; Stop shows while the turn runs', async () => {
    await ask(page, 'stream please');
    const answer = page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Streaming answer' });
    await answer.waitFor();
    const seen = new Set<string>();
    await waitFor(
      async () => {
        // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator's innerText is the text as the person sees it
        seen.add(await answer.innerText());
        return [...seen].some((t) => t.includes('THE END'));
      },
      'the whole answer',
      20_000,
    );
    expect([...seen].some((t) => t.length > 0 && !t.includes('THE END'))).toBe(true);
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  });

  it('Stop ends a running turn', async () => {
    await ask(page, 'hang please');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Thinking' }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('(stopped)').waitFor();
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  });

  it('an approval card: Approve runs the tool once, the card says who decided, another tab updates', async () => {
    await ask(page, 'write please');
    const card = page.getByRole('article', { name: /^Approval: / });
    // Named by their words (CONTRACT.md): the emoji shows but is hidden from the name.
    for (const name of [/^Approve$/, /^Deny$/, /^This session$/, /^Always: write_file/]) {
      const button = card.getByRole('button', { name });
      await button.waitFor();
      expect(await button.locator('[aria-hidden="true"].icon').count()).toBe(1);
    }
    const tab = await operator.newPage();
    await tab.goto(page.url());
    const tabCard = tab.getByRole('article', { name: /^Approval: / });
    await tabCard.getByRole('button', { name: 'Approve', exact: true }).waitFor();
    // The tab opened last is the one in front; Chromium holds back a tab behind it (animation
    // frames), and a click there waits seconds for the element to be seen steady.
    await page.bringToFront();
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.getByText('Approved once by web:operator').waitFor();
    expect(await card.getByRole('button').count()).toBe(0);
    await tabCard.getByText('Approved once by web:operator').waitFor();
    expect(await tabCard.getByRole('button').count()).toBe(0);
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Written:' }).waitFor();
    expect(readFileSync(path.join(dir, 'ws', 'approved.txt'), 'utf8')).toBe('approved');
    expect(toolResults('write_file').filter((m) => String(m.content).includes('approved.txt'))).toHaveLength(1);
    await tab.close();
    await page.bringToFront();
  });

  it('Deny, then a note in the message box: the note reaches the model', async () => {
    await ask(page, 'deny please');
    const card = page.getByRole('article', { name: /^Approval: / });
    await card.getByRole('button', { name: 'Deny' }).click();
    await card.getByText('Reply with a note for the model').waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('use notes.md instead');
    await box.press('Enter');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Understood, I will not.' }).waitFor();
    await card.getByText('Denied by web:operator').waitFor();
    await card.getByText('Note: use notes.md instead').waitFor();
    expect(toolResults('write_file').some((m) => String(m.content).includes('use notes.md instead'))).toBe(true);
    expect(existsSync(path.join(dir, 'ws', 'denied.txt'))).toBe(false);
  });

  it('a question card: answered by its button, and by free text in the message box', async () => {
    await ask(page, 'ask please');
    let card = page.getByRole('article', { name: 'Question' });
    await card.getByRole('button', { name: 'Blue' }).click();
    await page
      .getByRole('article', { name: 'switchboard' })
      .filter({ hasText: 'You chose:' })
      .filter({ hasText: 'Blue' })
      .waitFor();
    await card.getByText('Answered by web:operator').waitFor();
    await card.getByText('Blue', { exact: true }).waitFor();
    await ask(page, 'ask please');
    card = page.getByRole('article', { name: 'Question' });
    await card.getByRole('button', { name: 'Red' }).waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Green, please');
    await box.press('Enter');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Green, please' }).waitFor();
    await card.getByText('Answered by web:operator').waitFor();
    await card.getByText('Green, please', { exact: true }).waitFor();
  });

  it('Shift+Enter makes a new line; Enter sends', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('line one');
    await box.press('Shift+Enter');
    await box.pressSequentially('line two');
    expect(await box.inputValue()).toBe('line one\nline two');
    await box.press('Enter');
    await page.getByRole('article', { name: 'You' }).filter({ hasText: 'line two' }).waitFor();
    expect(await box.inputValue()).toBe('');
  });

  it('a command answers in the chat from the one command table, and stays in the history', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('/status');
    await box.press('Enter');
    const answer = page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Model:' });
    await answer.waitFor();
    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator's innerText is the text as the person sees it
    expect(await answer.innerText()).toContain('test-model');
  });

  it('files both ways: Attach uploads one the model is told of; a file the bot sends is a download link', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page
      .getByLabel('Attach')
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('my notes') });
    await page.getByText('Attached: notes.txt').waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'I got your file.' }).waitFor();
    const told = llm.chatRequests().some((r) => JSON.stringify(r.body.messages).includes('notes.txt'));
    expect(told).toBe(true);
    await ask(page, 'send me a file');
    const fileLink = page.getByRole('link', { name: 'report.txt' });
    await fileLink.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), fileLink.click()]);
    expect(readFileSync(await download.path(), 'utf8')).toBe('quarterly numbers\n');
  });

  it('an XSS corpus from the model executes nothing; code stays code; javascript: is no link', async () => {
    await ask(page, 'xss please');
    const answer = page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Corpus:' });
    await answer.waitFor();
    await answer.getByRole('link', { name: 'fine' }).waitFor();
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(await answer.locator('script, img, svg, [onerror], [onload]').count()).toBe(0);
    expect(await answer.getByRole('link', { name: 'click me' }).count()).toBe(0);
    expect(await answer.getByRole('link', { name: 'sneaky' }).count()).toBe(0);
    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator's innerText is the text as the person sees it
    expect(await answer.locator('pre code').innerText()).toContain('<script>window.__xss = 4</script>');
    expect(await answer.getByRole('link', { name: 'fine' }).getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('a state-changing request without the CSRF token is refused, same-site and cross-site', async () => {
    const before = llm.chatRequests().length;
    const status = await page.evaluate(
      async () =>
        (
          await fetch('/api/send', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ text: 'forged hello' }),
          })
        ).status,
    );
    expect(status).toBe(403);
    // A page of another site (localhost is not 127.0.0.1) posting a form: the cookie stays home.
    const evil = await operator.newPage();
    await evil.goto(`${llm.url.replace('127.0.0.1', 'localhost')}/evil`);
    await evil.evaluate(async (target) => {
      await fetch(target, {
        method: 'POST',
        mode: 'no-cors',
        credentials: 'include',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ text: 'forged cross-site' }),
      });
    }, `${base}/api/send`);
    await evil.close();
    await page.bringToFront();
    await page.waitForTimeout(300);
    expect(await page.getByText(/forged/).count()).toBe(0);
    expect(llm.chatRequests().length).toBe(before);
  });

  // Steps: goto the link, the message box, goto /admin, its heading.
  it('/admin: 403 and "Admins only" for a user who is not an admin', steps(4), async () => {
    const user = await b.context();
    const p = await user.newPage();
    await p.goto(await link('bob'));
    await p.getByRole('textbox', { name: 'Message' }).waitFor();
    const res = await p.goto(`${base}/admin`);
    expect(res?.status()).toBe(403);
    await p.getByRole('heading', { name: 'Admins only' }).waitFor();
    await user.close();
  });

  // Steps: goto the link, the message box, ask (4), the card's button, goto /admin, Approve, the
  // decided card, six regions.
  it('/admin: the console lists and decides for an admin', steps(17), async () => {
    const user = await b.context();
    const p = await user.newPage();
    await p.goto(await link('bob'));
    await p.getByRole('textbox', { name: 'Message' }).waitFor();
    // bob asks for a write; the operator decides it on /admin.
    await ask(p, 'write please');
    await p
      .getByRole('article', { name: /^Approval: / })
      .getByRole('button', { name: 'Approve', exact: true })
      .waitFor();
    const admin = await operator.newPage();
    await admin.goto(`${base}/admin`);
    const pending = admin.getByRole('region', { name: 'Pending approvals' });
    const row = pending.getByRole('article').filter({ hasText: 'web:bob' });
    await row.getByRole('button', { name: 'Approve' }).click();
    await p.getByText('Approved once by web:operator').waitFor();
    for (const name of [
      'Jobs',
      'Approval rules',
      'Pairing requests',
      'MCP servers',
      'Failed deliveries',
      'Pending questions',
    ]) {
      await admin.getByRole('region', { name }).waitFor();
    }
    await admin.close();
    await page.bringToFront();
    await user.close();
  });

  it('a code block comes highlighted on the server, under a bar with its language and a Copy button that copies it', async () => {
    await ask(page, 'code please');
    const answer = page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'small helper' });
    await answer.waitFor();
    const block = answer.locator('.code-block');
    await block.getByText('ts', { exact: true }).waitFor();
    expect(await block.locator('pre code span.hljs-keyword').filter({ hasText: 'export' }).count()).toBe(1);
    expect(await block.locator('pre code span.hljs-comment').count()).toBe(1);
    await operator.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await block.getByRole('button', { name: 'Copy' }).click();
    await block.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
    expect(copied).toContain('export async function retry<T>(fn: () => Promise<T>, times = 3): Promise<T> {');
    expect(copied).toContain('// retries a call with backoff');
    await block.getByRole('button', { name: 'Copy' }).waitFor();
  });

  it("a finished tool call's output opens in an expandable section", async () => {
    await ask(page, 'look please');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'quarterly numbers.' }).waitFor();
    const line = page.getByRole('article', { name: 'Tool' }).filter({ hasText: 'read_file' });
    const summary = line.getByText('Output', { exact: true });
    await summary.waitFor();
    // Closed at first: the output is not shown until asked for.
    expect(await line.locator('details').getAttribute('open')).toBeNull();
    await summary.click();
    await line.locator('details pre').filter({ hasText: 'quarterly numbers' }).waitFor();
  });

  it('a thinking indicator (a status) shows between send and the first token, and goes with the answer', async () => {
    await ask(page, 'slow please');
    const thinking = page.getByRole('status').filter({ hasText: 'Thinking…' });
    await thinking.waitFor();
    mkdirSync(path.dirname(SHOT), { recursive: true });
    await page.screenshot({ path: SHOT.replace(/\.png$/, '-thinking.png') });
    expect(await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Here at last.' }).count()).toBe(
      0,
    );
    openGate();
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Here at last.' }).waitFor();
    await thinking.waitFor({ state: 'detached' });
    gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
  });

  it('each message says when it was sent', async () => {
    await ask(page, 'time please');
    const mine = page.getByRole('article', { name: 'You' }).filter({ hasText: 'time please' });
    const stamp = mine.locator('time');
    await stamp.waitFor();
    const when = Date.parse((await stamp.getAttribute('datetime')) ?? '');
    expect(Math.abs(when - Date.now())).toBeLessThan(60_000);
    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator's innerText is the text as the person sees it
    expect(await stamp.innerText()).toMatch(/\d{1,2}[:.]\d{2}/);
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'ok' }).last().locator('time').waitFor();
  });

  // Steps: goto, two asks and their answers (10), goto, the current one, its message, the other tab (2), rename
  // (3), the name in three places (3), delete (2), gone from both tabs (2), what is left, reload
  // and the list after it (2).
  it('conversations: the newest opens first; renamed and deleted from the page, in every tab', steps(29), async () => {
    const ctx = await b.context({ viewport: { width: 900, height: 720 } });
    const p = await ctx.newPage();
    p.on('dialog', (d) => {
      throw new Error(`a dialog opened: ${d.message()}`);
    });
    await p.goto(await link('carol'));
    // Each answered before the next is asked: the newest is the one with the latest message, and an
    // answer to the older one arriving late would make it the newest.
    const answered = () => p.getByRole('article', { name: 'switchboard' }).first().waitFor();
    await ask(p, 'older talk');
    await answered();
    await ask(p, 'newer talk');
    await answered();
    const nav = p.getByRole('navigation', { name: 'Conversations' });
    // Opened without a conversation in the address: the newest is the one shown.
    await p.goto(`${base}/`);
    await nav.getByRole('button', { name: 'newer talk' }).and(p.locator('[aria-current="page"]')).waitFor();
    await p.getByRole('article', { name: 'You' }).filter({ hasText: 'newer talk' }).waitFor();
    const other = await ctx.newPage();
    await other.goto(p.url());
    await other
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: 'newer talk' })
      .waitFor();
    // Rename: the name in the side bar, the heading, and the other tab.
    await p.getByRole('button', { name: 'Rename', exact: true }).click();
    const name = p.getByRole('textbox', { name: 'Conversation name' });
    await name.fill('Release plan');
    await name.press('Enter');
    await nav.getByRole('button', { name: 'Release plan' }).waitFor();
    await p.getByRole('heading', { name: 'Release plan' }).waitFor();
    await other
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: 'Release plan' })
      .waitFor();
    // Delete asks on the page (no dialog), then the conversation goes from both tabs. The page is
    // brought to the front: a tab behind another is held back, and clicks there wait seconds.
    await p.bringToFront();
    await p.getByRole('button', { name: 'Delete', exact: true }).click();
    await p.getByRole('group', { name: 'Delete this conversation?' }).getByRole('button', { name: 'Delete' }).click();
    await nav.getByRole('button', { name: 'Release plan' }).waitFor({ state: 'detached' });
    await other
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: 'Release plan' })
      .waitFor({ state: 'detached' });
    // What is left opens in its place; after a reload the deleted one stays gone.
    await p.getByRole('article', { name: 'You' }).filter({ hasText: 'older talk' }).waitFor();
    await p.reload();
    await nav.getByRole('button', { name: 'older talk' }).waitFor();
    expect(await nav.getByRole('button', { name: /newer talk|Release plan/ }).count()).toBe(0);
    await ctx.close();
  });

  it(
    'SIGKILL, restart, reload: the history and the pending card are back and work',
    async () => {
      await ask(page, 'restart please');
      await page
        .getByRole('article', { name: /^Approval: / })
        .getByRole('button', { name: 'Approve', exact: true })
        .waitFor();
      const thread = new URL(page.url()).hash;
      await proc.kill();
      base = await start();
      await page.goto(`${base}/${thread}`);
      await page.getByRole('article', { name: 'You' }).filter({ hasText: 'restart please' }).waitFor();
      const card = page.getByRole('article', { name: /^Approval: / });
      await card.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Done after the restart.' }).waitFor();
      expect(readFileSync(path.join(dir, 'ws', 'restart.txt'), 'utf8')).toBe('after restart');
      // Earlier conversations are listed too.
      expect(
        await page
          .getByRole('navigation', { name: 'Conversations' })
          .getByRole('button', { name: 'stream please' })
          .count(),
      ).toBe(1);
    },
    budget(CHILD_START_MS, CHILD_START_MS, ...times(9, WAIT_MS)),
  ); // a restart (two start-up waits) and nine steps
  it('the README screenshot: code, a tool call with its output, timestamps and an approval card', async () => {
    await page.setViewportSize({ width: 1100, height: 1250 });
    await ask(page, 'code please');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'small helper' }).waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('look please: what is in report.txt?');
    await box.press('Enter');
    await page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'quarterly numbers.' }).waitFor();
    const line = page.getByRole('article', { name: 'Tool' }).filter({ hasText: 'read_file' });
    await line.getByText('Output', { exact: true }).click();
    await line.locator('details pre').filter({ hasText: 'quarterly numbers' }).waitFor();
    await box.fill('Now write please');
    await box.press('Enter');
    await page
      .getByRole('article', { name: /^Approval: / })
      .getByRole('button', { name: 'Approve', exact: true })
      .waitFor();
    await page.getByRole('button', { name: 'Rename', exact: true }).waitFor();
    mkdirSync(path.dirname(SHOT), { recursive: true });
    await page.screenshot({ path: SHOT });
    // The same in dark mode and at phone width, beside it (to look at, not in the docs).
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: SHOT.replace(/\.png$/, '-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: SHOT.replace(/\.png$/, '-phone.png') });
    await page.setViewportSize({ width: 900, height: 720 });
  });
});

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenMatches } from '../../src/jobs/api-notify.js';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { testConfig, waitFor } from '../helpers/harness.js';

const TOKEN = 'notify-secret-token-0123456789';
const alice = { id: 4242, first_name: 'Alice' };

let app: App | null = null;
let emu: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
afterEach(async () => {
  await app?.close();
  app = null;
  await emu?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** `switchboard start` with Telegram against the emulator, as main.ts wires it. */
async function start(apiToken: string | undefined): Promise<string> {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-notify-'));
  mkdirSync(path.join(dir, 'workspace'));
  const config = testConfig(dir, llm.url, {
    telegram: { bot_token: emu.token, api_root: emu.apiRoot, allowed_users: [String(alice.id)] },
    http: { port: 0, host: '127.0.0.1', api_token: apiToken },
    access: { admins: [`telegram:${alice.id}`] },
  });
  app = await startServer(config, pino({ level: 'silent' }));
  return `http://127.0.0.1:${app?.port}/api/notify`;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const auth = { authorization: `Bearer ${TOKEN}` };
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

function notes(chatId: number) {
  return emu.messages(chatId).filter((m) => m.kind === 'text' && m.plain.startsWith('🔔'));
}

describe('POST /api/notify', () => {
  it('is disabled (404) while no token is configured', async () => {
    const url = await start(undefined);
    const res = await post(url, { text: 'hi' }, auth);
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toContain('SWITCHBOARD_API_TOKEN');
  });

  it('refuses without a token, with a wrong one, bad bodies and unknown targets, and sends nothing', async () => {
    const url = await start(TOKEN);
    expect((await post(url, { text: 'hi' })).status).toBe(401);
    expect((await post(url, { text: 'hi' }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(url, { text: 'hi' }, { authorization: `Bearer ${TOKEN.slice(0, -1)}X` })).status).toBe(401);
    expect((await post(url, { text: 'hi' }, { authorization: TOKEN })).status).toBe(401);
    expect((await fetch(url, { headers: auth })).status).toBe(405);
    expect((await post(url, 'not json', auth)).status).toBe(400);
    const empty = await post(url, { text: '   ' }, auth);
    expect([empty.status, await errorOf(empty)]).toEqual([
      400,
      'text: Too small: expected string to have >=1 characters',
    ]);
    expect((await post(url, { text: 'x'.repeat(70_000) }, auth)).status).toBe(413);
    const unknown = await post(url, { to: 'telegram:999999', text: 'hi' }, auth);
    expect([unknown.status, await errorOf(unknown)]).toEqual([
      422,
      'unknown chat telegram:999999: switchboard only notifies chats it has talked in',
    ]);
    const elsewhere = await post(url, { to: 'slack:C1', text: 'hi' }, auth);
    expect([elsewhere.status, await errorOf(elsewhere)]).toEqual([
      422,
      'channel "slack" is not running here (running: telegram, web)',
    ]);
    const noHome = await post(url, { text: 'hi' }, auth);
    expect(noHome.status).toBe(422);
    expect(await errorOf(noHome)).toMatch(/^no target/);
    await new Promise((r) => setTimeout(r, 200));
    expect(emu.calls.filter((c) => c.method === 'sendMessage' || c.method === 'sendRichMessage')).toHaveLength(0);
  });

  it('delivers a good request once, through a storm of 429s; without "to" it goes to the admins\' home chats', async () => {
    const url = await start(TOKEN);
    emu.sendText(alice, '/sethome');
    await waitFor(
      () => emu.messages(alice.id).some((m) => m.plain.includes('receives your notifications')),
      'home set',
    );
    // A notification is Markdown: it goes as a rich message (the default).
    emu.fail('sendRichMessage', 3, { status: 429, retryAfter: 1, description: 'Too Many Requests: retry after 1' });
    const res = await post(url, { text: 'backup **failed** on host a', title: 'nightly backup' }, auth);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: true, to: [`telegram:${alice.id}`] });
    await waitFor(() => notes(alice.id).length, 'the notification', 15_000);
    // Shown once: with no delivery left to send (the ledger settled), no late copy can come.
    await waitFor(async () => {
      const open = await (app as App).core.db
        .selectFrom('deliveries')
        .select('id')
        .where('status', 'in', ['pending', 'sending', 'streaming'])
        .execute();
      return open.length === 0;
    }, 'the ledger settled');
    expect(notes(alice.id).map((m) => m.plain)).toEqual(['🔔 nightly backup\n\nbackup failed on host a']);
    const to = await post(url, { to: `telegram:${alice.id}`, text: 'second' }, auth);
    expect(to.status).toBe(202);
    await waitFor(() => notes(alice.id).length === 2, 'the addressed notification');
  });
});

describe('tokenMatches', () => {
  it('needs the Bearer scheme and the exact token', () => {
    expect(tokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(tokenMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(tokenMatches(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
    expect(tokenMatches('Basic abc', TOKEN)).toBe(false);
  });
});

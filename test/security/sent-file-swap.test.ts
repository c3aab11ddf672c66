/**
 * A file that is sent is the copy taken when it was sent (issue: `send_attachment exfil/r.txt`,
 * then `ln -sf <the config file> exfil/r.txt`, then the web chat's download served the whole
 * configuration). No race: the model sends `exfil/r.txt` ("hi"), the file is then replaced by a
 * symlink to a secret outside the workspace, and what the person gets is still "hi" — downloaded
 * from the web chat, and uploaded by Telegram and Slack on a retry that happens after the swap
 * (the platform refused the first attempt, so the upload is made again from the stored copy).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { testConfig, waitFor } from '../helpers/harness.js';
import { ALICE, type SlackStack, startSlackStack } from '../slack/stack.js';
import { alice, startTelegramTest, type TelegramTest } from '../telegram/setup.js';

const SECRET = 'api_token = "SECRET-sent-file-4b1d"';
const SEND = { toolCalls: [{ name: 'send_attachment', arguments: '{"path":"exfil/r.txt"}' }] };

/** `exfil/r.txt` with "hi" in the workspace, and a secret file outside it. */
function plant(workspace: string, outsideDir: string): { secret: string; file: string } {
  mkdirSync(path.join(workspace, 'exfil'), { recursive: true });
  const file = path.join(workspace, 'exfil', 'r.txt');
  writeFileSync(file, 'hi\n');
  const secret = path.join(outsideDir, 'switchboard.toml');
  writeFileSync(secret, `${SECRET}\n`);
  return { secret, file };
}

/** What `ln -sf <secret> exfil/r.txt` does after the file was sent. */
function swapForSymlink(file: string, secret: string): void {
  rmSync(file);
  symlinkSync(secret, file);
}

describe('a sent file, swapped for a symlink after sending', () => {
  let web: { app: App; llm: ScriptedLlm; dir: string } | undefined;
  let tg: TelegramTest | undefined;
  let slack: SlackStack | undefined;
  afterEach(async () => {
    if (web) {
      await web.app.close();
      await web.llm.close();
      rmSync(web.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
    await tg?.close();
    await slack?.close();
    web = undefined;
    tg = undefined;
    slack = undefined;
  });

  it('web chat: the download is what was sent, not the file the path names now', async () => {
    const llm = await startScriptedLlm();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-sent-web-'));
    const workspace = path.join(dir, 'workspace');
    mkdirSync(workspace);
    const app = await startServer(testConfig(dir, llm.url), pino({ level: 'silent' }));
    if (!app?.signIn) throw new Error('the web chat did not start');
    web = { app, llm, dir };
    const { secret, file } = plant(workspace, dir);
    const base = `http://127.0.0.1:${app.port}`;
    const link = await app.signIn.loginLink(app.port!, 'alice', false);
    const cookie = ((await fetch(link.url, { redirect: 'manual' })).headers.get('set-cookie') ?? '').split(';')[0]!;
    const { csrf } = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as { csrf: string };

    llm.push(SEND, { text: 'sent' });
    const sent = await fetch(`${base}/api/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
      body: JSON.stringify({ thread: '', text: 'send me the report' }),
    });
    expect(sent.status).toBe(200);
    const { sql } = await import('kysely');
    let ref = '';
    await waitFor(async () => {
      const rows = await sql<{
        ref: string;
        body: string;
      }>`SELECT ref, body FROM web_messages WHERE chat_key = 'alice'`.execute(app.core.db);
      ref = rows.rows.find((r) => (JSON.parse(r.body) as { kind: string }).kind === 'file')?.ref ?? '';
      return ref !== '';
    }, 'the file message');

    swapForSymlink(file, secret);
    const res = await fetch(`${base}/api/file?ref=${ref}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe('hi\n');
    expect(body).not.toContain('SECRET');
  });

  it('Telegram: the retried upload after the swap sends what was sent', async () => {
    tg = await startTelegramTest();
    const { secret, file } = plant(path.join(tg.dir, 'workspace'), tg.dir);
    // The first upload is refused (a server error): the presenter sends again from the row.
    tg.emu.fail('sendDocument', 1, { status: 500, description: 'Internal Server Error' });
    tg.llm.push(SEND, { text: 'sent' });
    tg.emu.sendText(alice, 'send me the report');
    const emu = tg.emu;
    await waitFor(() => emu.calls.some((c) => c.method === 'sendDocument' && !c.ok), 'the refused upload');
    swapForSymlink(file, secret);
    await waitFor(() => emu.messages(alice.id).some((m) => m.kind === 'document'), 'the upload after the swap');
    const docs = emu.messages(alice.id).filter((m) => m.kind === 'document');
    expect(docs).toHaveLength(1);
    expect(docs[0]!.file?.bytes.toString()).toBe('hi\n');
  });

  it('Slack: the retried upload after the swap sends what was sent', async () => {
    slack = await startSlackStack('socket');
    const stack = slack;
    const { secret, file } = plant(stack.workspace, stack.dir);
    // The first upload's answer is lost: the presenter sends again from the row.
    stack.emu.dropResponse('files.getUploadURLExternal', 1);
    stack.llm.push(SEND, { text: 'sent' });
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'send me the report', mention: true });
    await stack.sendEvent(mention);
    await waitFor(() => stack.emu.calls.some((c) => c.method === 'files.getUploadURLExternal'), 'the first upload');
    swapForSymlink(file, secret);
    await waitFor(() => stack.emu.uploads.some((u) => u.completed), 'the upload after the swap');
    expect(stack.emu.uploads.length).toBeGreaterThanOrEqual(2);
    const done = stack.emu.uploads.filter((u) => u.completed);
    expect(done).toHaveLength(1);
    expect(done[0]!.bytes.toString()).toBe('hi\n');
    for (const u of stack.emu.uploads) expect(u.bytes.toString()).not.toContain('SECRET');
  });
});

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type Db } from '../../src/store/db.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { insertJob } from '../../src/store/repos/jobs.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { waitFor } from '../helpers/harness.js';
import { spawnStart, type StartProcess } from './start-process.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
const alice = { id: 6161, first_name: 'Alice' };
const TOKEN = 'cli-notify-token';

let emu: TelegramEmulator;
let llm: ScriptedLlm;
let dir: string;
let db: Db;
let proc: StartProcess | null = null;
beforeEach(async () => {
  emu = await startTelegramEmulator();
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-jobcli-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'switchboard.toml'), '[jobs]\nresync_seconds = 1\n');
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  if (proc && proc.child.exitCode === null) await proc.kill();
  proc = null;
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'test',
    DATABASE_URL: testDatabaseUrl(dir),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'workspace'),
    SWITCHBOARD_CONFIG: path.join(dir, 'switchboard.toml'),
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(alice.id),
    SWITCHBOARD_ADMINS: `telegram:${alice.id}`,
    SWITCHBOARD_API_TOKEN: TOKEN,
    ...extra,
  };
}

/** Run the CLI as its own process; resolves with exit code and output. */
function cli(
  args: string[],
  extra: Record<string, string> = {},
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent', ...env(extra) } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

const notes = () => emu.messages(alice.id).filter((m) => m.kind === 'text' && m.plain.startsWith('🔔'));

describe('switchboard jobs / notify from a second process while start runs', () => {
  it('notify reaches a known chat, reads stdin with -, and refuses unknown targets', { timeout: 120_000 }, async () => {
    await ensureConversation(
      db,
      { channel: 'telegram', chatKey: String(alice.id), threadKey: '' },
      `telegram:${alice.id}`,
    );
    proc = await spawnStart(env());
    const port = String(proc.port);
    const sent = await cli(['notify', '--to', `telegram:${alice.id}`, '--title', 'disk', 'disk **90%** full'], {
      SWITCHBOARD_HTTP_PORT: port,
    });
    expect(sent).toMatchObject({ code: 0, stdout: `queued for telegram:${alice.id}\n` });
    await waitFor(() => notes().length, 'the CLI notification');
    expect(notes()[0]?.plain).toBe('🔔 disk\n\ndisk 90% full');

    const piped = await cli(
      ['notify', '--to', `telegram:${alice.id}`, '-'],
      { SWITCHBOARD_HTTP_PORT: port },
      'from stdin\n',
    );
    expect(piped.code).toBe(0);
    await waitFor(() => notes().length === 2, 'the piped notification');
    expect(notes()[1]?.plain).toBe('🔔 Notification\n\nfrom stdin');

    const unknown = await cli(['notify', '--to', 'telegram:1', 'hi'], { SWITCHBOARD_HTTP_PORT: port });
    expect(unknown).toMatchObject({
      code: 2,
      stderr: 'switchboard notify: unknown chat telegram:1: switchboard only notifies chats it has talked in\n',
    });
    const noToken = await cli(['notify', 'hi'], { SWITCHBOARD_HTTP_PORT: port, SWITCHBOARD_API_TOKEN: '' });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/^config: http.api_token \(env SWITCHBOARD_API_TOKEN\)/);
    expect(notes()).toHaveLength(2);
  });

  it('jobs list / pause / resume / run / delete act on the database the running switchboard uses', {
    timeout: 120_000,
  }, async () => {
    const conv = await ensureConversation(
      db,
      { channel: 'telegram', chatKey: String(alice.id), threadKey: '' },
      `telegram:${alice.id}`,
    );
    await insertJob(db, {
      id: 'clijob01',
      name: 'weekly',
      owner_id: `telegram:${alice.id}`,
      report_conversation_id: conv.id,
      prompt: 'sum up the week',
      cron: '0 9 * * 1',
      run_at: null,
      timezone: 'Europe/Berlin',
      next_run_at: Date.now() + 86_400_000,
    });
    llm.setHandler(() => ({ text: 'week summed up' }));
    proc = await spawnStart(env());
    const list = await cli(['jobs', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^clijob01 {2}active {2}\S+ {2}- {2}"weekly" {2}cron 0 9 \* \* 1 \(Europe\/Berlin\)\n$/,
    );
    expect(await cli(['jobs', 'pause', 'clijob01'])).toMatchObject({
      code: 0,
      stdout: 'Paused job “weekly” (clijob01).\n',
    });
    expect((await cli(['jobs', 'resume', 'clijob01'])).stdout).toMatch(
      /^Resumed job “weekly” \(clijob01\); next run \d{4}-\d\d-\d\d 09:00 \(Europe\/Berlin\)\.\n$/,
    );
    expect(await cli(['jobs', 'run', 'clijob01'])).toMatchObject({
      code: 0,
      stdout: 'Job “weekly” (clijob01) will run now.\n',
    });
    await waitFor(() => notes().length, 'the run started by the CLI', 15_000);
    expect(notes()[0]?.plain).toBe('🔔 ⏰ weekly\n\nweek summed up');
    expect(await cli(['jobs', 'delete', 'clijob01'])).toMatchObject({ code: 0 });
    expect((await cli(['jobs', 'list'])).stdout).toBe('no jobs\n');
    expect(await cli(['jobs', 'delete', 'nosuchjob'])).toMatchObject({ code: 1, stderr: 'No job nosuchjob.\n' });
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';

let dir: string | undefined;
let proc: StartedProcess | undefined;
let emu: TelegramEmulator | undefined;
let llm: ScriptedLlm | undefined;
afterEach(async () => {
  if (proc) await proc.kill();
  await emu?.close();
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  proc = emu = llm = dir = undefined;
});

describe('logging', () => {
  it('createLogger redacts tokens, keys and message text', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-log-'));
    const file = path.join(dir, 'switchboard.log');
    const log = createLogger('info', file);
    log.info(
      { token: 'xoxb-secret', config: { bot_token: '123:ABC', api_key: 'sk-1' }, text: 'private words', msg2: 'ok' },
      'hello',
    );
    log.flush();
    const out = readFileSync(file, 'utf8');
    expect(out).not.toMatch(/xoxb-secret|123:ABC|sk-1|private words/);
    expect(out).toContain('[redacted]');
    expect(out).toContain('"msg":"hello"');
    expect(out).toContain('"msg2":"ok"');
  });

  it('a running `switchboard start` at debug level logs neither its tokens and keys nor the conversation', async () => {
    emu = await startTelegramEmulator();
    llm = await startScriptedLlm();
    llm.push({ text: 'the answer is forty-two' });
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-log-proc-'));
    const alice = { id: 111, first_name: 'Alice' };
    const env = childEnv(dir, llm.url, '', {
      TELEGRAM_BOT_TOKEN: emu.token,
      TELEGRAM_API_ROOT: emu.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(alice.id),
    });
    const key = 'sk-test-do-not-log-9f3c';
    proc = await startProcess({ ...env, OPENAI_API_KEY: key, LOG_LEVEL: 'debug' });
    const p = proc;
    emu.sendText(alice, 'my private question about the weather');
    await waitFor(
      () => emu?.messages(alice.id).some((m) => m.kind === 'text' && m.plain === 'the answer is forty-two'),
      'the answer',
    );
    expect(await p.stop()).toBe(0);
    const out = p.logs.map((l) => JSON.stringify(l)).join('\n');
    expect(p.logs.length).toBeGreaterThan(3); // it did log: the absence below means something
    expect(out).toContain('switchboard started');
    for (const secret of [emu.token, key, 'my private question', 'forty-two'])
      expect(out, secret).not.toContain(secret);
  });
});

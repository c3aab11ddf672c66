import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack.js';
import { waitFor } from '../helpers/harness.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

let llm: ScriptedLlm;
let emu: SlackEmulator;
let dir: string;
beforeAll(async () => {
  llm = await startScriptedLlm();
  emu = await startSlackEmulator();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-start-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('switchboard start (child process)', () => {
  it('serves /healthz, and on SIGTERM exits 0 within 10 s', async () => {
    const child = spawn(process.execPath, [BIN, 'start'], {
      env: {
        ...process.env,
        OPENAI_BASE_URL: llm.url,
        DATABASE_URL: testDatabaseUrl(dir, 'db'),
        SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
        SLACK_BOT_TOKEN: 'xoxb-emulator',
        SLACK_SIGNING_SECRET: emu.app.signingSecret,
        SLACK_API_URL: emu.apiUrl,
        SWITCHBOARD_HTTP_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let port = 0;
    createInterface({ input: child.stderr }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'switchboard started' && entry.port) port = entry.port;
      } catch {
        // not a log line
      }
    });
    await waitFor(() => port, 'the started log line', 15_000);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const t = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - t).toBeLessThan(10_000);
  });
});

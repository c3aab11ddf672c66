/**
 * A newcomer with no model configured (no OPENAI_API_KEY, no base URL) is told what to set — the
 * key, a local server's OPENAI_BASE_URL, or the demo — by `start`, by `doctor` and by the answer to
 * the first chat message.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_NOT_CONFIGURED } from '../../src/delivery/notices.js';
import { killLeftRunning, type StartedProcess, startProcess, writeConfig } from '../helpers/child-start.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let dir: string;
let env: Record<string, string>;
const procs: StartedProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-nomodel-'));
  mkdirSync(path.join(dir, 'ws'));
  // An empty variable is unset: nothing from the environment the tests run in leaks in.
  env = {
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    SWITCHBOARD_MODEL: '',
    TELEGRAM_BOT_TOKEN: '',
    SLACK_BOT_TOKEN: '',
    SWITCHBOARD_CONFIG: writeConfig(dir),
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
  };
});
afterAll(async () => {
  await killLeftRunning(procs);
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('no model configured', () => {
  it('start warns at once, saying what to set', async () => {
    const p = await startProcess(env, 60_000);
    procs.push(p);
    const warning = p.logs.find((l) => l.level === 40 && l.msg === MODEL_NOT_CONFIGURED);
    expect(warning).toBeDefined();
    // Before the "started" line: at start, not at the first message.
    expect(p.logs.indexOf(warning!)).toBeLessThan(p.logs.findIndex((l) => l.msg === 'switchboard started'));
    expect(await p.stop()).toBe(0);
  }, 90_000);

  it('doctor fails the model check with what to set, and exits 1', async () => {
    const child = spawn(process.execPath, [BIN, 'doctor'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out).toContain(`FAIL  model endpoint: ${MODEL_NOT_CONFIGURED}\n`);
    expect(MODEL_NOT_CONFIGURED).toMatch(/OPENAI_API_KEY.*OPENAI_BASE_URL.*--demo/);
    expect(code).toBe(1);
  }, 90_000);

  it('the first chat message is answered with the same guidance, not a network error', async () => {
    const p = spawnJsonl(env, ['--conversation', 'first']);
    p.send({ type: 'message', text: 'hello' });
    const done = await p.waitForLine((l) => l.type === 'turn_done', 'the turn to end', 60_000);
    expect(done.status).toBe('failed');
    expect(p.lines.filter((l) => l.type === 'error').map((l) => l.message)).toEqual([MODEL_NOT_CONFIGURED]);
    p.endInput();
    expect(await p.exited).toBe(0);
  }, 90_000);
});

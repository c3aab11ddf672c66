/**
 * The embedded default: `switchboard start` with no platform token on a real pseudo-terminal
 * (util-linux `script`) serves the web chat, prints the operator's login link and opens the
 * console chat on the same core (the terminal gets its answer, the link signs in an admin);
 * /quit leaves with exit 0.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { waitFor } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
const noPty = skipReason('script', 'the embedded-default test runs start on a pseudo-terminal');
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

let llm: ScriptedLlm;
let dir: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-embedded-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe.skipIf(noPty !== undefined)(`npm start with no platform token${skipped(noPty)}`, () => {
  it('serves the web chat with a login link and opens the console chat beside it', async () => {
    llm.push({ text: 'hello from the model' });
    const env = {
      ...process.env,
      TERM: 'xterm',
      TELEGRAM_BOT_TOKEN: '',
      SLACK_BOT_TOKEN: '',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'k',
      SWITCHBOARD_MODEL: 'test-model',
      DATABASE_URL: testDatabaseUrl(dir, 'db'),
      SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
      SWITCHBOARD__HTTP__HOST: '127.0.0.1',
      SWITCHBOARD__HTTP__PORT: '0',
    };
    const child = spawn('script', ['-qfec', [process.execPath, BIN, 'start'].map(quote).join(' '), '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (d) => {
      screen += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await waitFor(
        () => /Web chat: (http:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]+)/.exec(screen)?.[1],
        'the login link',
        60_000,
      );
      expect(screen).toContain('serving the web chat and the console chat');
      await waitFor(() => screen.includes('switchboard chat — conversation "console"'), 'the console chat', 20_000);
      // The link comes first, not in the middle of the console's prompt.
      expect(screen.indexOf('Web chat: ')).toBeLessThan(screen.indexOf('switchboard chat — conversation'));
      child.stdin.write('hi\r');
      await waitFor(() => screen.includes('hello from the model'), 'the console answer', 20_000);
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(303);
      const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
      const session = (await (await fetch(new URL('/api/session', url), { headers: { cookie } })).json()) as {
        user: string;
        admin: boolean;
      };
      expect(session).toMatchObject({ user: 'operator', admin: true });
      // Leaving this console ends the web chat as well: it says so before and when it does.
      expect(screen).toContain('/quit (or Ctrl-C with nothing running) stops switchboard, the web chat too.');
      child.stdin.write('/quit\r');
      expect(await exited).toBe(0);
      expect(screen).toContain('(leaving: switchboard stops, the web chat too)');
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});

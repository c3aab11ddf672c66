/**
 * Ctrl-C in the terminal chat, on a real pseudo-terminal (`switchboard chat` under util-linux's
 * `script`): it cancels the running turn as /stop and the chat goes on; at an idle prompt it
 * leaves with exit 0. A turn left unfinished by a killed session resumes in the next one, which
 * says so.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { modelEnv } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { openTestDatabase } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
const noPty = skipReason('script', 'the Ctrl-C tests run the chat on a pseudo-terminal');
const CTRL_C = '\x03';

let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
const sessions: Session[] = [];

interface Session {
  child: ChildProcessWithoutNullStreams;
  /** Everything the terminal showed (with its control sequences). */
  screen(): string;
  /** The pid of switchboard itself (the command `script` runs). */
  pid: Promise<number>;
  type(text: string): void;
  exited: Promise<number | null>;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `switchboard chat` on a pseudo-terminal; its pid is printed first, then it execs. */
function openChat(conversation: string): Session {
  const command = `echo "pid=$$"; exec ${[process.execPath, BIN, 'chat', '--conversation', conversation].map(shellQuote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, ...env, TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => {
    text += d.toString();
  });
  child.stderr.on('data', (d) => {
    text += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const session: Session = {
    child,
    screen: () => text,
    pid: waitFor(
      () => {
        const m = /pid=(\d+)/.exec(text);
        return m ? Number(m[1]) : undefined;
      },
      'the chat pid',
      30_000,
    ),
    type: (t) => child.stdin.write(t),
    exited,
  };
  sessions.push(session);
  return session;
}

async function turnStatuses(): Promise<string[]> {
  const db = openTestDatabase(dir, 'db');
  try {
    return (await db.selectFrom('turns').select('status').orderBy('started_at').execute()).map((r) => r.status);
  } finally {
    await db.destroy();
  }
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-ctrl-c-'));
  env = modelEnv(dir, llm.url);
});
afterAll(async () => {
  for (const s of sessions) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await llm?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** A reply that streams for about 20 s: still running whenever the test presses a key. */
const SLOW = { text: `${'slowly streaming words '.repeat(50)}end.`, chunkSize: 6, delayMs: 100 };

describe.skipIf(noPty !== undefined)(`the terminal chat and Ctrl-C${skipped(noPty)}`, () => {
  it('Ctrl-C cancels the running turn and the chat goes on; Ctrl-C at the idle prompt exits 0', async () => {
    const chat = openChat('ctrl-c');
    await waitFor(() => chat.screen().includes('› '), 'the prompt', 60_000);
    llm.push(SLOW);
    chat.type('tell me slowly\r');
    // A reply is shown a paragraph at a time; while one is written the chat shows how far it is.
    await waitFor(() => chat.screen().includes('writing ('), 'the reply streaming', 30_000);
    chat.type(CTRL_C);
    await waitFor(() => chat.screen().includes('(stopped)'), 'the turn stopped', 15_000);
    expect(chat.child.exitCode).toBeNull();
    expect(await turnStatuses()).toEqual(['cancelled']);

    // The chat goes on after the stop.
    llm.push({ text: 'Quick answer.' });
    chat.type('and now quickly\r');
    await waitFor(() => chat.screen().includes('Quick answer.'), 'the next reply', 30_000);
    await waitFor(async () => (await turnStatuses()).at(-1) === 'done', 'the turn done');

    chat.type(CTRL_C);
    expect(await chat.exited).toBe(0);
    expect(chat.screen()).not.toContain('end.');
  }, 120_000);

  it('a turn left unfinished by a killed session resumes in the next one, which says so', async () => {
    const first = openChat('resume');
    await waitFor(() => first.screen().includes('› '), 'the prompt', 60_000);
    llm.push(SLOW);
    first.type('tell me slowly\r');
    await waitFor(() => first.screen().includes('writing ('), 'the reply streaming', 30_000);
    process.kill(await first.pid, 'SIGKILL');
    await first.exited;

    llm.push({ text: 'Resumed answer.' });
    const second = openChat('resume');
    await waitFor(() => second.screen().includes('Resumed answer.'), 'the resumed reply', 60_000);
    expect(second.screen()).toContain('(resuming the reply the last session left unfinished');
    await waitFor(async () => (await turnStatuses()).at(-1) === 'done', 'the resumed turn done');
    second.type(CTRL_C);
    expect(await second.exited).toBe(0);
  }, 120_000);
});

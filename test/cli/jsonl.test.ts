import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { modelEnv } from '../helpers/child-start.js';
import { waitFor } from '../helpers/harness.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { testPostgresUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
/** Tests that start the CLI more than once: each start compiles the sources (seconds on a busy machine). */
const CHILD_TIMEOUT = 90_000;

let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-jsonl-'));
  env = modelEnv(dir, llm.url);
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('switchboard chat --jsonl (child process)', () => {
  it('answers with deltas and a reply, and reports bad lines as errors without other effects', async () => {
    llm.push({ text: 'Hello from the model.' });
    const p = spawnJsonl(env, ['--conversation', 'first']);
    p.sendRaw('this is not json');
    p.send({ type: 'launch' });
    p.send({ type: 'approve' });
    p.send({ type: 'message', text: 'hi' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    p.endInput();
    expect(await p.exited).toBe(0);
    const errors = p.lines.filter((l) => l.type === 'error').map((l) => l.message);
    expect(errors).toEqual([
      'input is not JSON',
      'unknown input type "launch"',
      'invalid approve: id: Invalid input: expected string, received undefined',
    ]);
    expect(
      p.lines
        .filter((l) => l.type === 'delta')
        .map((l) => l.text)
        .join(''),
    ).toBe('Hello from the model.');
    expect(p.lines.find((l) => l.type === 'reply')?.text).toBe('Hello from the model.');
    expect(llm.chatRequests()).toHaveLength(1);
  });

  it('survives a restart while an approval is pending: re-emitted, approved, run once, replied once', async () => {
    const before = llm.chatRequests().length;
    llm.push({
      toolCalls: [
        { name: 'write_file', arguments: JSON.stringify({ path: 'notes/out.txt', content: 'written once\n' }) },
      ],
    });
    const first = spawnJsonl(env, ['--conversation', 'restart']);
    first.send({ type: 'message', text: 'write the file' });
    const asked = await first.waitForLine((l) => l.type === 'approval_requested', 'approval_requested');
    expect(asked.tool).toBe('write_file');
    expect(await first.stop()).toBe(0);
    expect(existsSync(path.join(dir, 'ws/notes/out.txt'))).toBe(false);

    llm.push({ text: 'File written.' });
    const second = spawnJsonl(env, ['--conversation', 'restart']);
    const again = await second.waitForLine((l) => l.type === 'approval_requested', 're-emitted approval');
    expect(again.id).toBe(asked.id);
    second.send({ type: 'approve', id: asked.id, scope: 'once' });
    await second.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    second.endInput();
    expect(await second.exited).toBe(0);
    expect(readFileSync(path.join(dir, 'ws/notes/out.txt'), 'utf8')).toBe('written once\n');
    expect(second.lines.filter((l) => l.type === 'reply').map((l) => l.text)).toEqual(['File written.']);
    expect(second.lines.find((l) => l.type === 'approval_resolved')).toMatchObject({
      id: asked.id,
      decision: 'approved',
      scope: 'once',
    });
    expect(second.lines.filter((l) => l.type === 'tool_finished')).toEqual([
      expect.objectContaining({ name: 'write_file', status: 'done' }),
    ]);
    expect(llm.chatRequests().length - before).toBe(2);
  });

  it('deny with a note reaches the model', async () => {
    llm.push(
      { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo hi' }) }] },
      { text: 'Understood.' },
    );
    const p = spawnJsonl(env, ['--conversation', 'deny']);
    p.send({ type: 'message', text: 'run it' });
    const asked = await p.waitForLine((l) => l.type === 'approval_requested', 'approval');
    p.send({ type: 'deny', id: asked.id, note: 'not now' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    p.endInput();
    await p.exited;
    const last = llm.chatRequests().at(-1)?.body.messages.at(-1);
    expect(last).toMatchObject({ role: 'tool', content: 'The user denied this tool call. Their note: not now' });
  });
});

describe('chat --jsonl sessions see only their own conversation', () => {
  it(
    "a new conversation neither shows nor decides another conversation's pending approval",
    async () => {
      llm.push({
        toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'c4/out.txt', content: 'from c4\n' }) }],
      });
      const c4 = spawnJsonl(env, ['--conversation', 'c4']);
      c4.send({ type: 'message', text: 'write it' });
      const asked = await c4.waitForLine((l) => l.type === 'approval_requested', 'c4 approval');
      expect(asked.conversation).toBe('c4');
      expect(asked.always).toBe('write_file on c4/out.txt');
      c4.endInput();
      expect(await c4.stop()).toBe(0);

      llm.push({ text: 'Hello, new one.' });
      const other = spawnJsonl(env, ['--conversation', 'brand-new-one']);
      other.send({ type: 'message', text: 'hi' });
      await other.waitForLine((l) => l.type === 'turn_done', 'turn_done of the new conversation');
      other.send({ type: 'approve', id: asked.id, scope: 'once' });
      other.send({ type: 'answer', id: 'no-such-question', text: 'x' });
      await other.waitForLine((l) => l.type === 'error' && l.message.startsWith('answer'), 'answer refused');
      other.endInput();
      expect(await other.exited).toBe(0);
      expect(other.lines.filter((l) => l.type === 'approval_requested')).toEqual([]);
      expect(other.lines.find((l) => l.type === 'error' && l.message.startsWith('approve'))?.message).toBe(
        `approve ${asked.id}: no such approval or question`,
      );
      expect(other.lines.every((l) => l.conversation === 'brand-new-one')).toBe(true);
      expect(existsSync(path.join(dir, 'ws/c4/out.txt'))).toBe(false);

      // c4's approval is still pending and shows up again when c4 is opened.
      const again = spawnJsonl(env, ['--conversation', 'c4']);
      expect((await again.waitForLine((l) => l.type === 'approval_requested', 're-emitted approval')).id).toBe(
        asked.id,
      );
      again.send({ type: 'stop' });
      await again.waitForLine((l) => l.type === 'turn_done', 'cancelled');
      again.send({ type: 'stop' });
      await again.waitForLine((l) => l.type === 'error', 'nothing to stop');
      again.endInput();
      expect(await again.exited).toBe(0);
      expect(again.lines.filter((l) => l.type === 'error').map((l) => l.message)).toEqual(['nothing to stop']);
      expect(existsSync(path.join(dir, 'ws/c4/out.txt'))).toBe(false);
    },
    CHILD_TIMEOUT,
  );

  it(
    'the local operator is not rate limited: 25 quick messages all reach the model',
    async () => {
      const before = llm.chatRequests().length;
      const p = spawnJsonl(env, ['--conversation', 'flood']);
      for (let i = 1; i <= 25; i++) p.send({ type: 'message', text: `message ${i}` });
      // Messages that arrive during a turn join it at the next round, so turns may be fewer than 25.
      const userTexts = () =>
        llm
          .chatRequests()
          .slice(before)
          .flatMap((r) => r.body.messages)
          .filter((m: any) => m.role === 'user')
          .map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
      await waitFor(() => userTexts().some((t) => t.includes('message 25')), 'message 25 at the model', 20_000);
      p.endInput(); // exits once every turn is done
      expect(await p.exited).toBe(0);
      expect(p.lines.at(-1)).toMatchObject({ type: 'turn_done', status: 'done' });
      expect(p.lines.filter((l) => l.type === 'error')).toEqual([]);
      for (let i = 1; i <= 25; i++) expect(userTexts().some((t) => t.includes(`message ${i}`))).toBe(true);
    },
    CHILD_TIMEOUT,
  );
});

describe('switchboard chat (interactive, child process)', () => {
  it(
    'writes its log to a file beside the database, never into the conversation',
    async () => {
      llm.push({ text: 'Hi there.' });
      // With PostgreSQL the log goes to the temp folder: a fresh one of this test's own, so a log
      // left by an earlier run cannot satisfy the check below.
      const tmp = mkdtempSync(path.join(dir, 'tmp-'));
      const child = spawn(process.execPath, [BIN, 'chat', '--conversation', 'logs'], {
        env: { ...process.env, ...env, LOG_LEVEL: 'info', TMPDIR: tmp },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.stdin.end('hello\n');
      expect(await exited).toBe(0);
      expect(out).toContain('Hi there.');
      expect(out).not.toMatch(/"level":/);
      // Beside the SQLite file; with PostgreSQL there is no file, so the temp folder.
      const logFile = path.join(testPostgresUrl ? tmp : dir, 'switchboard.log');
      expect(err).toBe(`(logs: ${logFile})\n`);
      expect(readFileSync(logFile, 'utf8')).toMatch(/"msg":"terminal chat started"/);
    },
    CHILD_TIMEOUT,
  );
});

describe('CLI exit codes', () => {
  it('exits 2 with one line naming the key on bad configuration', async () => {
    const p = spawnJsonl({ ...env, SWITCHBOARD_HTTP_PORT: 'not-a-port' });
    expect(await p.exited).toBe(2);
    expect(p.stderr).toEqual([
      'config: http.port (env SWITCHBOARD_HTTP_PORT): Invalid input: expected number, received string',
    ]);
  });
});

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';

let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-jsonl-'));
  mkdirSync(path.join(dir, 'ws'));
  env = {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'k',
    SWITCHBOARD_MODEL: 'test-model',
    DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
  };
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
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
    expect(errors).toEqual(['input is not JSON', 'unknown input type "launch"', 'invalid approve: id: Invalid input: expected string, received undefined']);
    expect(p.lines.filter((l) => l.type === 'delta').map((l) => l.text).join('')).toBe('Hello from the model.');
    expect(p.lines.find((l) => l.type === 'reply')?.text).toBe('Hello from the model.');
    expect(llm.chatRequests()).toHaveLength(1);
  });

  it('survives a restart while an approval is pending: re-emitted, approved, run once, replied once', async () => {
    const before = llm.chatRequests().length;
    llm.push({ toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'notes/out.txt', content: 'written once\n' }) }] });
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
    expect(second.lines.find((l) => l.type === 'approval_resolved')).toMatchObject({ id: asked.id, decision: 'approved', scope: 'once' });
    expect(second.lines.filter((l) => l.type === 'tool_finished')).toEqual([
      expect.objectContaining({ name: 'write_file', status: 'done' }),
    ]);
    expect(llm.chatRequests().length - before).toBe(2);
  });

  it('deny with a note reaches the model', async () => {
    llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo hi' }) }] }, { text: 'Understood.' });
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

describe('CLI exit codes', () => {
  it('exits 2 with one line naming the key on bad configuration', async () => {
    const p = spawnJsonl({ ...env, SWITCHBOARD_HTTP_PORT: 'not-a-port' });
    expect(await p.exited).toBe(2);
    expect(p.stderr).toEqual(['config: http.port (env SWITCHBOARD_HTTP_PORT): Invalid input: expected number, received NaN']);
  });
});

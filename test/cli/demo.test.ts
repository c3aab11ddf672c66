/**
 * `switchboard chat --demo`: the terminal chat (here over JSON lines) on the built-in scripted
 * model, with no endpoint or key: labelled as a demo, and an approval and a question go through
 * the real engine.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LABEL } from '../../src/demo/model.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-demo-'));
  mkdirSync(path.join(dir, 'ws'));
  // No model endpoint anywhere: a request to one would fail.
  env = {
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    OPENAI_API_KEY: '',
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws', 'new'),
  }; // not there yet: start makes it
});
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

describe('switchboard chat --demo', () => {
  it('answers from the scripted model, labelled; an approval and a question work end to end', async () => {
    const p = spawnJsonl(env, ['--demo']);
    const replies = () => p.lines.filter((l) => l.type === 'reply').map((l) => String(l.text));
    p.send({ type: 'message', text: 'hello' });
    await p.waitForLine((l) => l.type === 'turn_done', 'the first answer');
    expect(existsSync(path.join(dir, 'ws', 'new'))).toBe(true);
    expect(replies()[0]).toMatch(
      new RegExp(`^\\${DEMO_LABEL} This is switchboard's built-in demo model: a short script, not an LLM\\.`),
    );

    p.send({ type: 'message', text: 'write a file' });
    const approval = await p.waitForLine((l) => l.type === 'approval_requested', 'the approval');
    expect(approval).toMatchObject({ tool: 'write_file', label: 'write_file demo.txt' });
    expect(existsSync(path.join(dir, 'ws', 'new', 'demo.txt'))).toBe(false);
    p.send({ type: 'approve', id: approval.id, scope: 'once' });
    await p.waitForLine(
      (l) => l.type === 'reply' && String(l.text).includes('The write_file call came back with'),
      'the reply after the approval',
    );
    expect(readFileSync(path.join(dir, 'ws', 'new', 'demo.txt'), 'utf8')).toBe(
      'Written by the switchboard demo after you approved it.\n',
    );

    p.send({ type: 'message', text: 'ask me something' });
    const question = await p.waitForLine((l) => l.type === 'question', 'the question');
    expect(question).toMatchObject({ question: 'Which colour should the demo use?' });
    expect(JSON.stringify(question)).toContain('green');
    p.send({ type: 'answer', id: question.id, text: 'green' });
    await p.waitForLine(
      (l) => l.type === 'reply' && String(l.text).startsWith(`${DEMO_LABEL} You answered: green`),
      'the reply to the answer',
    );
    p.endInput();
    expect(await p.exited).toBe(0);
    expect(p.lines.filter((l) => l.type === 'error')).toEqual([]);
    for (const r of replies()) expect(r.startsWith(DEMO_LABEL)).toBe(true);
  }, 90_000);
});

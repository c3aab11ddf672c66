/**
 * A crash in the middle of a child: `switchboard chat --jsonl` is killed with SIGKILL while a
 * sub-agent's shell command runs; a new process over the same database rebuilds the tree from the
 * rows, re-runs the interrupted call and the parent finishes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

let llm: ScriptedLlm;
let dir: string;
beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-sub-crash-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('sub-agents across a crash', () => {
  it('rebuilds the tree after SIGKILL mid-child and carries on', async () => {
    const config = path.join(dir, 'sb.toml');
    writeFileSync(config, '[[approvals.rules]]\ntool = "bash"\naction = "allow"\n');
    llm.setHandler((body) => {
      const system: string = body.messages[0]?.content ?? '';
      const results = body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);
      if (system.includes('sub-agent')) {
        if (results.length === 0)
          return { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'sleep 2; echo finally' }) }] };
        return { text: `child saw ${results[0]?.trim().split('\n')[0]}` };
      }
      if (results.length === 0)
        return { toolCalls: [{ name: 'task', arguments: JSON.stringify({ prompt: 'run the slow command' }) }] };
      return { text: `parent: ${results[0]}` };
    });
    const env = {
      DATABASE_URL: testDatabaseUrl(dir),
      SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'k',
    };
    const first = spawnJsonl(env, ['--config', config, '--conversation', 'crash']);
    first.send({ type: 'message', text: 'delegate' });
    const started = await first.waitForLine(
      (l) => l.type === 'tool_started' && l.name === 'bash',
      'child bash started',
    );
    expect(started.label).toBe('🤖 task: run the slow command → bash sleep 2; echo finally');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = spawnJsonl(env, ['--config', config, '--conversation', 'crash']);
    const done = await second.waitForLine((l) => l.type === 'turn_done', 'turn_done after restart', 30_000);
    expect(done.status).toBe('done');
    const reply = second.lines.find((l) => l.type === 'reply');
    expect(reply?.text).toBe('parent: Sub-agent summary:\nchild saw finally');
    // The child's own reply stayed between the agents.
    expect(second.lines.filter((l) => l.type === 'reply')).toHaveLength(1);
    expect(await second.stop()).toBe(0);
    // Two process starts, a 2 s command and a resumed turn: on a busy machine this takes longer than
    // the suite's 20 s default, which is shorter than the restart's own 30 s wait.
  }, 60_000);
});

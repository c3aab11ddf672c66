/**
 * A server's question after SIGKILL: the JSONL chat (a child process) runs server-everything's
 * elicitation tool and is killed while the card waits. The restarted process expires that card
 * (the server's request died with the process), refuses a late answer to it, re-runs the call,
 * and the server asks again on a new card that is answered through JSONL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { budget, CHILD_START_MS, LINE_WAIT_MS, times, WAIT_MS } from '../helpers/budgets.js';
import { modelEnv } from '../helpers/child-start.js';
import { type JsonlProcess, spawnJsonl } from '../helpers/jsonl-process.js';
import { EVERYTHING } from './reference-servers.js';

let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let config: string;
const procs: JsonlProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-elicit-kill-'));
  config = path.join(dir, 'sb.toml');
  writeFileSync(
    config,
    [
      '[[approvals.rules]]',
      'tool = "mcp__*"',
      'action = "allow"',
      '',
      '[mcp.servers.ev]',
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
      '',
    ].join('\n'),
  );
  env = modelEnv(dir, llm.url);
});
afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/**
 * The test's timeout is the sum of its waits (it failed at the suite's 20 s default while its waits
 * allowed 30 s each): two child starts measured to their first line, the MCP server's start for the
 * re-run call, three steps of a ready child, and the clean exit.
 */
const TEST_BUDGET = budget(...times(3, CHILD_START_MS), ...times(3, LINE_WAIT_MS), WAIT_MS);

describe('an MCP server question after SIGKILL', () => {
  it('is expired by the restarted process, and the re-run call asks again', { timeout: TEST_BUDGET }, async () => {
    llm.push({
      toolCalls: [{ name: 'mcp__ev__trigger-url-elicitation', arguments: '{"url":"https://example.org/a"}' }],
    });
    const first = spawnJsonl(env, ['--config', config, '--conversation', 'kill']);
    procs.push(first);
    first.send({ type: 'message', text: 'open the link' });
    // From spawn: the process and its MCP server start before the question can come.
    const asked = await first.waitForLine((l) => l.type === 'question', 'the first question', CHILD_START_MS);
    expect(asked.question).toContain('https://example.org/a');
    process.kill(first.pid, 'SIGKILL');
    await first.exited;

    llm.push({ text: 'Done.' });
    const second = spawnJsonl(env, ['--config', config, '--conversation', 'kill']);
    procs.push(second);
    await second.waitForLine(
      (l) => l.type === 'question_resolved' && l.id === asked.id && l.status === 'cancelled',
      'the old card expired',
      CHILD_START_MS, // expiring stranded cards is the restarted process's start-up work
    );
    second.send({ type: 'answer', id: asked.id, text: 'Done' });
    await second.waitForLine(
      (l) => l.type === 'error' && String(l.message).startsWith(`answer ${asked.id}`),
      'the late answer refused',
    );
    const again = await second.waitForLine(
      (l) => l.type === 'question' && l.id !== asked.id,
      'the question asked anew',
      CHILD_START_MS, // the re-run call waits for the restarted process's MCP server to start
    );
    expect(again.suggested_answers).toEqual(['Done', 'Decline', 'Cancel']);
    second.send({ type: 'answer', id: again.id, text: 'Done' });
    const finished = await second.waitForLine((l) => l.type === 'tool_finished', 'tool_finished');
    expect(finished.status).toBe('done');
    await second.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    const toolResult = llm
      .chatRequests()
      .at(-1)
      ?.body.messages.find((m: any) => m.role === 'tool')?.content;
    expect(toolResult).toContain('✅ User completed the URL elicitation flow.');
    second.endInput();
    expect(await second.exited).toBe(0);
  });
});

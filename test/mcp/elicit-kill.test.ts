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

describe('an MCP server question after SIGKILL', () => {
  it('is expired by the restarted process, and the re-run call asks again', async () => {
    llm.push({
      toolCalls: [{ name: 'mcp__ev__trigger-url-elicitation', arguments: '{"url":"https://example.org/a"}' }],
    });
    const first = spawnJsonl(env, ['--config', config, '--conversation', 'kill']);
    procs.push(first);
    first.send({ type: 'message', text: 'open the link' });
    const asked = await first.waitForLine((l) => l.type === 'question', 'the first question', 30_000);
    expect(asked.question).toContain('https://example.org/a');
    process.kill(first.pid, 'SIGKILL');
    await first.exited;

    llm.push({ text: 'Done.' });
    const second = spawnJsonl(env, ['--config', config, '--conversation', 'kill']);
    procs.push(second);
    await second.waitForLine(
      (l) => l.type === 'question_resolved' && l.id === asked.id && l.status === 'cancelled',
      'the old card expired',
      30_000,
    );
    second.send({ type: 'answer', id: asked.id, text: 'Done' });
    await second.waitForLine(
      (l) => l.type === 'error' && String(l.message).startsWith(`answer ${asked.id}`),
      'the late answer refused',
    );
    const again = await second.waitForLine(
      (l) => l.type === 'question' && l.id !== asked.id,
      'the question asked anew',
      30_000,
    );
    expect(again.suggested_answers).toEqual(['Done', 'Decline', 'Cancel']);
    second.send({ type: 'answer', id: again.id, text: 'Done' });
    const finished = await second.waitForLine((l) => l.type === 'tool_finished', 'tool_finished', 30_000);
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

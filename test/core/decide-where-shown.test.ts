/**
 * A card is decided where it is shown: a sub-agent's approval shows in its parent's JSONL session,
 * and a job run's approval and question (its own conversation, `job:<id>`) show in the session the
 * job reports to; `approve`, `deny` and `answer` there decide them. A session that does not show
 * them still cannot.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { modelEnv } from '../helpers/child-start.js';
import { type JsonlProcess, spawnJsonl } from '../helpers/jsonl-process.js';

let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let config: string;
const running: JsonlProcess[] = [];

const lastUser = (body: any): string =>
  String(body.messages.filter((m: any) => m.role === 'user').at(-1)?.content ?? '');
const toolResults = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === 'tool').map((m: any) => String(m.content));

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-decide-shown-'));
  config = path.join(dir, 'sb.toml');
  // schedule_job needs no tap here: the tests are about the job run's own cards.
  writeFileSync(config, '[[approvals.rules]]\ntool = "schedule_job"\naction = "allow"\n');
  env = modelEnv(dir, llm.url);
  llm.setHandler((body) => {
    const system: string = body.messages[0]?.content ?? '';
    const user = lastUser(body);
    const results = toolResults(body);
    if (system.includes('sub-agent')) {
      if (results.length === 0)
        return {
          toolCalls: [
            { name: 'write_file', arguments: JSON.stringify({ path: 'child.txt', content: 'from the child\n' }) },
          ],
        };
      return { text: `child: ${results[0]}` };
    }
    if (user.includes('delegate')) {
      if (results.length === 0)
        return { toolCalls: [{ name: 'task', arguments: JSON.stringify({ prompt: 'write child.txt' }) }] };
      return { text: 'parent done' };
    }
    if (user.includes('schedule a write')) {
      if (results.length === 0) {
        const at = new Date(Date.now() + 1500).toISOString();
        return {
          toolCalls: [
            { name: 'schedule_job', arguments: JSON.stringify({ prompt: 'job: write job.txt', at, name: 'writer' }) },
          ],
        };
      }
      return { text: 'scheduled' };
    }
    if (user.includes('schedule a question')) {
      if (results.length === 0) {
        const at = new Date(Date.now() + 1500).toISOString();
        return {
          toolCalls: [
            { name: 'schedule_job', arguments: JSON.stringify({ prompt: 'job: ask which colour', at, name: 'asker' }) },
          ],
        };
      }
      return { text: 'scheduled' };
    }
    if (user.includes('job: write job.txt')) {
      if (results.length === 0)
        return {
          toolCalls: [
            { name: 'write_file', arguments: JSON.stringify({ path: 'job.txt', content: 'from the job\n' }) },
          ],
        };
      return { text: `job result: ${results[0]}` };
    }
    if (user.includes('job: ask which colour')) {
      if (results.length === 0)
        return {
          toolCalls: [
            {
              name: 'ask_user_clarification',
              arguments: JSON.stringify({ question: 'Which colour?', suggested_answers: ['red', 'blue'] }),
            },
          ],
        };
      return { text: `job heard: ${results[0]}` };
    }
    return { text: 'ok' };
  });
});
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function open(conversation: string): JsonlProcess {
  const p = spawnJsonl(env, ['--config', config, '--conversation', conversation]);
  running.push(p);
  return p;
}

const errors = (p: JsonlProcess) => p.lines.filter((l) => l.type === 'error').map((l) => l.message);

describe('deciding a card where it is shown (JSONL sessions)', () => {
  it("a sub-agent's approval is approved from the parent's session; another session cannot", async () => {
    const parent = open('parent-sub');
    parent.send({ type: 'message', text: 'delegate the write' });
    const asked = await parent.waitForLine(
      (l) => l.type === 'approval_requested' && l.tool === 'write_file',
      "the child's approval",
      60_000,
    );
    // Another session does not show it, so it cannot decide it.
    const other = open('someone-else');
    other.send({ type: 'approve', id: asked.id, scope: 'once' });
    await other.waitForLine((l) => l.type === 'error', 'the refusal');
    expect(errors(other)).toEqual([`approve ${asked.id}: no such approval or question`]);
    other.endInput();
    await other.exited;

    parent.send({ type: 'approve', id: asked.id, scope: 'once' });
    const done = await parent.waitForLine((l) => l.type === 'turn_done', 'the parent turn done', 60_000);
    expect(done.status).toBe('done');
    expect(errors(parent)).toEqual([]);
    expect(readFileSync(path.join(dir, 'ws/child.txt'), 'utf8')).toBe('from the child\n');
    expect(parent.lines.find((l) => l.type === 'approval_resolved' && l.id === asked.id)).toMatchObject({
      decision: 'approved',
    });
    parent.endInput();
    expect(await parent.exited).toBe(0);
  }, 120_000);

  it("a job run's approval is denied from the session the job reports to, and the run ends", async () => {
    const session = open('job-owner');
    session.send({ type: 'message', text: 'schedule a write' });
    await session.waitForLine((l) => l.type === 'reply' && l.text === 'scheduled', 'the job scheduled', 60_000);
    const asked = await session.waitForLine(
      (l) => l.type === 'approval_requested' && l.tool === 'write_file',
      "the job run's approval",
      60_000,
    );
    expect(asked.label).toContain('[writer]');
    session.send({ type: 'deny', id: asked.id, note: 'not from a job' });
    await session.waitForLine((l) => l.type === 'approval_resolved' && l.id === asked.id, 'the denial shown', 30_000);
    expect(errors(session)).toEqual([]);
    expect(session.lines.find((l) => l.type === 'approval_resolved' && l.id === asked.id)).toMatchObject({
      decision: 'denied',
    });
    // The run goes on with the denial and reports back here.
    await session.waitForLine(
      (l) => l.type === 'notification' && String(l.text).includes('job result: The user denied this tool call'),
      'the run report',
      30_000,
    );
    expect(existsSync(path.join(dir, 'ws/job.txt'))).toBe(false);
    session.endInput();
    expect(await session.exited).toBe(0);
  }, 120_000);

  it("a job run's question is answered from the session the job reports to", async () => {
    const session = open('job-asker');
    session.send({ type: 'message', text: 'schedule a question' });
    const q = await session.waitForLine((l) => l.type === 'question', "the job run's question", 60_000);
    expect(q.question).toContain('Which colour?');
    session.send({ type: 'answer', id: q.id, text: 'blue' });
    await session.waitForLine(
      (l) => l.type === 'notification' && String(l.text).includes('job heard: The user answered: blue'),
      'the run report',
      30_000,
    );
    expect(errors(session)).toEqual([]);
    session.endInput();
    expect(await session.exited).toBe(0);
  }, 120_000);
});

/**
 * Sub-agents with the scripted model: task, plan with its review, tool sets per depth, bounded
 * parallel children with results in call order, a child's approval in the parent chat, stop
 * cascade, and a restart in the middle of a child.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import type { ScriptedStep } from '../emulators/llm.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { latch, runs, testTools } from '../helpers/test-tools.js';

/** The built-ins plus the test tools, offered to sub-agents as well. */
const tools = [
  ...builtinTools(configSchema.parse({})),
  ...testTools.map((t) => ({ ...t, meta: { ...t.meta, subAgent: true } })),
];

let h: Harness | undefined;
afterEach(async () => {
  latch.open();
  await h?.close();
  h = undefined;
});

/** What one model request looks like to a script. */
interface Req {
  /** The first user message: a child's assignment, or the user's text. */
  prompt: string;
  child: boolean;
  /** Results of tool calls so far, in order. */
  results: string[];
  tools: string[];
  system: string;
}

/** Answer every model request through `script`, child and parent alike. */
function route(script: (r: Req) => ScriptedStep): void {
  h?.llm.setHandler((body) => {
    const system = body.messages[0]?.content ?? '';
    const users = body.messages.filter((m: any) => m.role === 'user');
    const req: Req = {
      prompt: users.at(-1)?.content ?? '',
      child: system.includes('sub-agent'),
      results: body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content),
      tools: (body.tools ?? []).map((t: any) => t.function.name),
      system,
    };
    return script(req);
  });
}

const call = (name: string, args: unknown): ScriptedStep => ({
  toolCalls: [{ name, arguments: JSON.stringify(args) }],
});
const turnDone = (n = 1) =>
  waitFor(() => (h?.channel.eventsOf('turn_done').length ?? 0) >= n, `${n} turn_done on the chat`, 20_000);
const rootId = async () =>
  (await h?.core.db.selectFrom('conversations').select('id').where('parent_id', 'is', null).executeTakeFirstOrThrow())
    ?.id;
const children = () =>
  h?.core.db
    .selectFrom('conversations')
    .selectAll()
    .where('parent_id', 'is not', null)
    .orderBy('depth')
    .orderBy('agent_prompt')
    .execute();

describe('sub-agents', () => {
  it('task: a child runs to completion with its own tools and returns a summary; the chat sees its steps labelled', async () => {
    h = await startHarness({ tools, overrides: { tools: { deferred: false } } });
    const offered: Record<string, string[]> = {};
    route((r) => {
      if (r.child) {
        offered.child = r.tools;
        if (r.results.length === 0) return call('echo', { text: 'from child' });
        return { text: `child summary (${r.results[0]})` };
      }
      offered.parent ??= r.tools;
      if (r.results.length === 0) return call('task', { prompt: 'count the files in the workspace' });
      return { text: `parent heard: ${r.results[0]}` };
    });
    await h.send('please delegate');
    await turnDone();
    expect(h.channel.eventsOf('reply').map((e) => e.text)).toEqual([
      'parent heard: Sub-agent summary:\nchild summary (echo: from child)',
    ]);
    const [child] = (await children()) ?? [];
    expect(child).toMatchObject({
      depth: 1,
      agent_kind: 'task',
      agent_state: 'finished',
      agent_label: 'task: count the files in the workspace',
    });
    const root = await rootId();
    // Everything reached the root chat; the child's own reply did not.
    expect(h.channel.printed.every((d) => d.conversationId === root)).toBe(true);
    expect(h.channel.eventsOf('tool_started').map((e) => e.label)).toEqual([
      'task count the files in the workspace',
      '🤖 task: count the files in the workspace → echo from child',
    ]);
    expect(offered.parent).toEqual(expect.arrayContaining(['task', 'plan', 'remember', 'send_attachment']));
    expect(offered.child).toEqual(expect.arrayContaining(['task', 'echo', 'read_file', 'bash']));
    expect(offered.child).not.toContain('plan');
    expect(offered.child).not.toContain('remember');
    expect(offered.child).not.toContain('send_attachment');
    const turns = await h.core.db.selectFrom('turns').select(['status', 'requester_id']).execute();
    expect(turns).toEqual([
      { status: 'done', requester_id: 'test:u1' },
      { status: 'done', requester_id: 'test:u1' },
    ]);
  });

  it('does not offer task beyond the maximum depth, and keeps a child to the tools its parent named', async () => {
    h = await startHarness({ tools, overrides: { subagents: { max_depth: 2 }, tools: { deferred: false } } });
    const seen: Array<{ depth: string; tools: string[] }> = [];
    route((r) => {
      const depth = r.child ? (r.prompt.startsWith('level 2') ? '2' : '1') : '0';
      if (r.results.length === 0) seen.push({ depth, tools: r.tools });
      if (depth === '0') return r.results.length ? { text: 'top done' } : call('task', { prompt: 'level 1 work' });
      if (depth === '1')
        return r.results.length ? { text: 'level 1 done' } : call('task', { prompt: 'level 2 work', tools: ['echo'] });
      return r.results.length ? { text: 'level 2 done' } : call('bash', { command: 'true' });
    });
    await h.send('go deep');
    await turnDone();
    const byDepth = Object.fromEntries(seen.map((s) => [s.depth, s.tools]));
    expect(byDepth['1']).toContain('task');
    expect(byDepth['2']).not.toContain('task');
    expect(byDepth['2']?.sort()).toEqual(['ask_user_clarification', 'echo']);
    const levels = (await children())?.map((c) => c.depth);
    expect(levels).toEqual([1, 2]);
    // The level-2 child tried a tool outside its set and was told so.
    const calls = await h.core.db
      .selectFrom('tool_calls')
      .select(['name', 'status', 'result'])
      .where('name', '=', 'bash')
      .execute();
    expect(calls).toEqual([
      {
        name: 'bash',
        status: 'failed',
        result: expect.stringMatching(/^Unknown tool "bash"\. Available tools: ask_user_clarification, echo\.$/),
      },
    ]);
  });

  it('runs at most `parallel` children at a time and returns their results in call order', async () => {
    latch.reset();
    h = await startHarness({ tools, overrides: { subagents: { parallel: 2 } } });
    route((r) => {
      if (r.child) return r.results.length ? { text: `result of ${r.prompt}` } : call('hold', {});
      if (r.results.length) return { text: r.results.join(' | ') };
      return { toolCalls: ['A', 'B', 'C'].map((p) => ({ name: 'task', arguments: JSON.stringify({ prompt: p }) })) };
    });
    await h.send('three at once');
    await waitFor(() => runs.hold === 2, 'two children holding');
    await new Promise((r) => setTimeout(r, 300));
    const states = (await children())?.map((c) => [c.agent_prompt, c.agent_state]);
    expect(states).toEqual([
      ['A', 'running'],
      ['B', 'running'],
      ['C', 'queued'],
    ]);
    expect(runs.hold).toBe(2);
    latch.open();
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe(
      'Sub-agent summary:\nresult of A | Sub-agent summary:\nresult of B | Sub-agent summary:\nresult of C',
    );
    runs.hold = 0;
  });

  it('plan: a read-only child writes a plan the user accepts with a button before the parent continues', async () => {
    h = await startHarness({ tools });
    let planTools: string[] = [];
    route((r) => {
      if (r.child) {
        planTools = r.tools;
        return { text: '1. Read the config\n2. Change the port' };
      }
      if (r.results.length === 0) return call('plan', { prompt: 'move the server to port 9000' });
      return { text: `got: ${r.results[0]?.split('\n')[0]}` };
    });
    await h.send('plan it');
    const q = await waitFor(() => h?.channel.eventsOf('question')[0], 'plan review card');
    expect(q.suggestedAnswers).toEqual(['Accept', 'Reject']);
    expect(q.question).toContain('1. Read the config\n2. Change the port');
    const [child] = (await children()) ?? [];
    const file = path.join(h.dir, 'workspace', 'plans', `plan-${child?.parent_call_id}.md`);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('1. Read the config\n2. Change the port\n');
    expect(planTools).toContain('read_file');
    expect(planTools).not.toContain('write_file');
    expect(planTools).not.toContain('bash');
    expect(planTools).not.toContain('task');
    // Nobody but the requester (or an admin) decides.
    expect(await h.core.answerQuestion({ id: q.id, text: 'Accept', by: 'test:u2' })).toMatchObject({
      ok: false,
      reason: 'not_allowed',
    });
    expect(await h.core.answerQuestion({ id: q.id, text: 'Accept', by: 'test:u1' })).toMatchObject({ ok: true });
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe(
      `got: The user accepted the plan (saved at plans/plan-${child?.parent_call_id}.md). Carry it out.`,
    );
  });

  it('plan: a typed reply annotates the plan', async () => {
    h = await startHarness({ tools });
    route((r) => {
      if (r.child) return { text: 'step one' };
      if (r.results.length === 0) return call('plan', { prompt: 'tidy up' });
      return { text: r.results[0]?.split('\n')[0] ?? '' };
    });
    await h.send('plan');
    await waitFor(() => h?.channel.eventsOf('question')[0], 'plan review card');
    expect((await h.send('also keep the logs')).status).toBe('answered_question');
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toMatch(
      /^The user annotated the plan \(plans\/plan-.*\.md\): also keep the logs$/,
    );
  });

  it("puts a child's approval into the parent chat, labelled, decided only by the requester", async () => {
    runs.danger = 0;
    h = await startHarness({ tools });
    route((r) => {
      if (r.child) return r.results.length ? { text: `child: ${r.results[0]}` } : call('danger', { target: 'x.txt' });
      return r.results.length ? { text: 'ok' } : call('task', { prompt: 'touch x.txt' });
    });
    await h.send('do it');
    const req = await waitFor(() => h?.channel.eventsOf('approval_requested')[0], 'approval card');
    expect(req.label).toBe('🤖 task: touch x.txt · danger x.txt');
    expect(req.requester).toBe('test:u1');
    expect(h.channel.printed.find((d) => d.event.type === 'approval_requested')?.conversationId).toBe(await rootId());
    expect(await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u2' })).toMatchObject({
      ok: false,
      reason: 'not_allowed',
    });
    expect(runs.danger ?? 0).toBe(0);
    expect((await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' })).ok).toBe(true);
    await turnDone();
    expect(runs.danger).toBe(1); // approved once: run once, not again
    const statuses = await h.core.db.selectFrom('turns').select('status').execute();
    expect(statuses.map((s) => s.status)).toEqual(['done', 'done']);
  });

  it("puts a child's question into the parent chat, labelled; a typed reply answers it", async () => {
    h = await startHarness({ tools });
    route((r) => {
      if (r.child)
        return r.results.length
          ? { text: `child heard ${r.results[0]}` }
          : call('ask_user_clarification', { question: 'Which branch?' });
      return r.results.length ? { text: r.results[0] ?? '' } : call('task', { prompt: 'merge the branch' });
    });
    await h.send('go');
    const q = await waitFor(() => h?.channel.eventsOf('question')[0], 'child question');
    expect(q.question).toBe('🤖 task: merge the branch asks: Which branch?');
    expect((await h.core.status({ channel: 'test', chatKey: 'chat1' })).pendingQuestions).toBe(1);
    expect((await h.send('main please')).status).toBe('answered_question');
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe(
      'Sub-agent summary:\nchild heard The user answered: main please',
    );
  });

  it('stop cancels every descendant, and nothing is left running', async () => {
    h = await startHarness({ tools });
    route((r) => {
      if (r.child && r.prompt.startsWith('inner')) return call('sleep', {});
      if (r.child) return call('task', { prompt: 'inner sleeper' });
      return call('task', { prompt: 'outer' });
    });
    await h.send('go');
    await waitFor(() => (runs.sleep ?? 0) >= 1, 'the grandchild sleeps');
    expect(await h.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1')).toBe(true);
    await waitFor(async () => {
      const open = await h?.core.db
        .selectFrom('turns')
        .select('id')
        .where('status', 'in', ['running', 'waiting'])
        .execute();
      return open?.length === 0;
    }, 'no open turns');
    const turns = await h.core.db.selectFrom('turns').select('status').execute();
    expect(turns.map((t) => t.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const calls = await h.core.db.selectFrom('tool_calls').select(['name', 'status']).orderBy('created_at').execute();
    expect(calls.every((c) => c.status === 'cancelled')).toBe(true);
    expect((await children())?.map((c) => c.agent_state)).toEqual(['finished', 'finished']);
    await h.core.idle();
    runs.sleep = 0;
  });

  it('a child that fails ends its parent call as failed instead of leaving it running', async () => {
    h = await startHarness({ tools, overrides: { llm: { max_rounds: 2 } } });
    route((r) => {
      if (r.child) return call('echo', { text: 'again' });
      return r.results.length ? { text: `parent saw: ${r.results[0]}` } : call('task', { prompt: 'loop forever' });
    });
    await h.send('go');
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe(
      'parent saw: The sub-agent failed: stopped after 2 model rounds (llm.max_rounds); send a message to continue',
    );
    expect(h.channel.eventsOf('error')[0]?.message).toMatch(/^🤖 task: loop forever: stopped after 2 model rounds/);
  });

  it('carries on after a restart in the middle of a child', async () => {
    latch.reset();
    h = await startHarness({ tools });
    route((r) => {
      if (r.child) return r.results.length ? { text: `child got ${r.results.at(-1)}` } : call('hold', {});
      return r.results.length ? { text: `parent: ${r.results[0]}` } : call('task', { prompt: 'wait for it' });
    });
    await h.send('go');
    await waitFor(() => runs.hold === 1, 'child holding');
    await h.restart();
    // The hold call was running at the restart: it is re-gated and re-run.
    await waitFor(() => runs.hold === 2, 'child re-ran its call');
    latch.open();
    await turnDone();
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe('parent: Sub-agent summary:\nchild got released');
    runs.hold = 0;
  });
});

/**
 * Every built-in tool's happy path through the real turn engine: the scripted model calls the
 * tool, the core gates and runs it, and the result reaches the model's next request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../../src/config.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createWebFetchTool } from '../../src/tools/builtins/web-fetch.js';
import type { Resolver } from '../../src/tools/ssrf.js';
import { startWebServer, type WebServer } from '../emulators/web.js';
import { budget, times, WAIT_MS } from '../helpers/budgets.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { WARM_MATH_MS, warmMathWorker } from '../helpers/math-worker.js';
import { livePidsWith } from './context.js';

let h: Harness | undefined;
let web: WebServer;
beforeAll(async () => {
  web = await startWebServer();
});
// The math worker's start is waited for once, by its readiness, not inside a turn's ceiling (under
// load it took most of one, and math-runner.ts gave up on it at 15 s); the harnesses' close leaves
// that worker running (see test/helpers/math-worker.ts).
vi.mock(import('../../src/tools/math-runner.js'), async (original) => ({
  ...(await original()),
  stopMath: async () => undefined,
}));
afterAll(async () => {
  await web.close();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

/** The built-ins, with web_fetch able to reach the local test server as "public.example". */
function tools() {
  const list = builtinTools(
    configSchema.parse({ tools: { web_search: { backend: 'searxng', url: 'http://127.0.0.1:1' } } }),
  );
  const fetchTool = createWebFetchTool({
    resolver,
    allowException: (ip, port) => ip === '127.0.0.1' && port === web.port,
  });
  return list.map((t) => (t.name === 'web_fetch' ? fetchTool : t));
}

async function start(allowAll: boolean) {
  h = await startHarness({
    tools: tools(),
    overrides: {
      approvals: { rules: allowAll ? [{ tool: '*', action: 'allow' }] : [] },
      tools: { web_search: { backend: 'searxng', url: `${web.url}/searxng` } },
    },
  });
  return h;
}

const ws = () => path.join(h!.dir, 'workspace');
/**
 * The ceiling of one tool call's turn (model, gate, tool, model again). A test's timeout is
 * {@link budget} of its calls' ceilings: the one test that ran 14 calls under the suite's 20 s
 * default timed out under load, so the tools are tested in groups of at most six calls.
 */
const TURN_MS = 15_000;
const turns = (n: number) =>
  waitFor(() => h!.events.filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn_done`, TURN_MS);

/** Run one tool call through the engine; returns what the model was given back and the finish event. */
async function call(name: string, args: unknown, n: number, extraSteps: { text: string }[] = []) {
  h!.llm.push({ toolCalls: [{ name, arguments: JSON.stringify(args) }] }, ...extraSteps, { text: `done ${n}` });
  await h!.send(`please ${name}`);
  await turns(n);
  const finished = h!.channel.eventsOf('tool_finished').at(-1)!;
  const requests = h!.llm.chatRequests();
  const last = requests.at(-1)!.body.messages as { role: string; content: string }[];
  const result = last.filter((m) => m.role === 'tool').at(-1)!.content;
  return { finished, result };
}

describe('built-in tools through the engine', () => {
  it('runs the file tools: read, edit, write, patch, list and search', {
    timeout: budget(...times(6, TURN_MS)),
  }, async () => {
    await start(true);
    fs.writeFileSync(path.join(ws(), 'notes.txt'), 'alpha\nbeta\n');
    let n = 0;
    let r = await call('read_file', { path: 'notes.txt' }, ++n);
    expect(r.finished).toMatchObject({ name: 'read_file', status: 'done' });
    expect(r.result).toContain('     1\talpha');

    r = await call('edit_file', { path: 'notes.txt', old_string: 'beta', new_string: 'gamma' }, ++n);
    expect(r.finished.status).toBe('done');
    expect(fs.readFileSync(path.join(ws(), 'notes.txt'), 'utf8')).toBe('alpha\ngamma\n');

    r = await call('write_file', { path: 'out/new.md', content: '# hi\n' }, ++n);
    expect(r.result).toContain('Created out/new.md');

    r = await call(
      'write_patch',
      {
        patches: [
          { op: 'create', path: 'p.txt', content: 'p' },
          { op: 'edit', path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' },
        ],
      },
      ++n,
    );
    expect(r.finished.status).toBe('done');
    expect(fs.readFileSync(path.join(ws(), 'notes.txt'), 'utf8')).toBe('ALPHA\ngamma\n');

    r = await call('list_files', {}, ++n);
    expect(r.result).toContain('out/new.md');

    r = await call('search', { query: 'gamma' }, ++n);
    expect(r.result).toContain('notes.txt:2:gamma');

    const audits = await h!.core.db
      .selectFrom('audit')
      .select(['kind', 'data'])
      .where('kind', '=', 'file_write')
      .execute();
    expect(audits.length).toBeGreaterThanOrEqual(4);
    const reads = await h!.core.db.selectFrom('file_reads').selectAll().execute();
    expect(reads.some((x) => x.path.endsWith('notes.txt'))).toBe(true);
  });

  it('runs the memory tools: remember (into the next system prompt), recall and forget', {
    timeout: budget(...times(3, TURN_MS)),
  }, async () => {
    await start(true);
    let n = 0;
    let r = await call('remember', { key: 'colour', value: 'teal' }, ++n);
    expect(r.result).toContain('Saved memory');
    r = await call('recall', { query: 'teal' }, ++n);
    expect(r.result).toContain('- colour: teal');
    // Saved memories reach the system prompt of the next request.
    const system = (h!.llm.chatRequests().at(-1)!.body.messages as { role: string; content: string }[]).find(
      (m) => m.role === 'system',
    );
    expect(system?.content).toContain('- colour: teal');
    r = await call('forget', { key: 'colour' }, ++n);
    expect(r.result).toContain('Forgot');
  });

  it('runs the todo, scratchpad (into the next system prompt) and math tools', {
    timeout: budget(WARM_MATH_MS, ...times(3, TURN_MS)),
  }, async () => {
    await warmMathWorker();
    await start(true);
    let n = 0;
    let r = await call('write_todos', { todos: [{ content: 'a', status: 'completed' }] }, ++n);
    expect(r.result).toContain('[x] 1. a');
    r = await call('update_scratchpad', { content: 'remember the milk' }, ++n);
    expect(r.finished.status).toBe('done');
    await call('math', { expression: '6 * 7' }, ++n);
    const sys2 = (h!.llm.chatRequests().at(-1)!.body.messages as { role: string; content: string }[]).find(
      (m) => m.role === 'system',
    );
    expect(sys2?.content).toContain('remember the milk');
    expect((h!.llm.chatRequests().at(-1)!.body.messages as { role: string; content: string }[]).at(-1)?.content).toBe(
      '42',
    );
  });

  it('runs bash, bash_processes, man, web_fetch (with a question) and web_search', {
    timeout: budget(...times(6, TURN_MS)),
  }, async () => {
    await start(true);
    let n = 0;
    let r = await call('bash', { command: 'echo hello from bash' }, ++n);
    expect(r.finished).toMatchObject({ name: 'bash', status: 'done' });
    expect(r.result).toContain('hello from bash');
    expect(
      h!.channel
        .eventsOf('tool_output')
        .map((e) => e.text)
        .join('\n'),
    ).toContain('hello from bash');
    const shell = await h!.core.db
      .selectFrom('audit')
      .selectAll()
      .where('kind', '=', 'shell_exec')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(shell.data)).toMatchObject({ command: 'echo hello from bash', exit_code: 0 });
    expect(shell.tool_call_id).toBeTruthy();

    r = await call('bash', { command: 'sleep 30', background: true }, ++n);
    expect(r.result).toContain('Started background process');
    r = await call('bash_processes', { action: 'list' }, ++n);
    expect(r.result).toMatch(/bg\d+ +pid \d+ +running/);

    r = await call('man', { page: 'ls' }, ++n);
    expect(r.result).toMatch(/list directory contents|no manual page|man is not installed/);

    r = await call(
      'web_fetch',
      { url: `http://public.example:${web.port}/page.html`, question: 'What is the answer?' },
      ++n,
      [{ text: 'The answer is 42.' }],
    );
    expect(r.finished.status).toBe('done');
    expect(r.result).toContain('The answer is 42.');
    expect(r.result).toContain('Source: http://public.example');

    r = await call('web_search', { query: 'kittens', max_results: 2 }, ++n);
    expect(r.result).toContain('1. Result 1 for kittens');
  });

  it('stopping the turn kills a running command and its children', {
    timeout: budget(...times(4, WAIT_MS)),
  }, async () => {
    await start(true);
    // A distinct sleep length names the child so it can be found from outside the sandbox.
    h!.llm.push(
      { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'sleep 63.1 & echo started; wait' }) }] },
      { text: 'never' },
    );
    await h!.send('run it');
    await waitFor(() => h!.channel.eventsOf('tool_output').some((e) => e.text === 'started'), 'command started');
    // The shell may print before the forked child has become `sleep 63.1` (exec): wait for it.
    await waitFor(() => livePidsWith('63.1').length === 1, 'the child runs');
    expect(livePidsWith('63.1')).toHaveLength(1);
    expect(await h!.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1')).toBe(true);
    await waitFor(() => livePidsWith('63.1').length === 0, 'child gone');
    const shell = await waitFor(
      () => h!.core.db.selectFrom('audit').selectAll().where('kind', '=', 'shell_exec').executeTakeFirst(),
      'shell_exec audit',
    );
    expect(JSON.parse(shell.data)).toMatchObject({ cancelled: true, timed_out: false });
  });

  it('asks before bash by default, showing the command, and refuses escapes as failed results', {
    timeout: budget(WAIT_MS, TURN_MS, TURN_MS),
  }, async () => {
    const h = await start(false);
    h.llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'git status' }) }] }, { text: 'ok' });
    await h.send('status?');
    const req = await waitFor(() => h.channel.eventsOf('approval_requested')[0], 'approval');
    expect(req).toMatchObject({
      tool: 'bash',
      label: 'bash git status',
      preview: 'workdir . · in the foreground, default timeout\n$ git status',
    });
    await h.core.decideApproval({ id: req.id, decision: 'deny', by: 'test:u1' });
    await turns(1);

    h.llm.push(
      { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: '../../etc/passwd' }) }] },
      { text: 'ok' },
    );
    await h.send('read it');
    await turns(2);
    const finished = h.channel.eventsOf('tool_finished').at(-1)!;
    expect(finished).toMatchObject({ name: 'read_file', status: 'failed' });
    const toolMsg = (h.llm.chatRequests().at(-1)!.body.messages as { role: string; content: string }[])
      .filter((m) => m.role === 'tool')
      .at(-1);
    expect(toolMsg?.content).toContain('refused');
    expect(toolMsg?.content).not.toContain('root:');
  });
});

/** Cost of a turn: the core catalog only, deferred groups named in the prompt and switched on by the model. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFERRED_GROUPS, modelSchema } from '../../src/core/deferred-tools.js';
import { budget } from '../helpers/budgets.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { WARM_MATH_MS, warmMathWorker } from '../helpers/math-worker.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const request = (i: number) => (h as Harness).llm.chatRequests()[i];
const offered = (i: number): string[] => request(i)?.body.tools.map((t: any) => t.function.name) ?? [];
/**
 * The ceiling of one `turns` wait. Each test's timeout is {@link budget} of its waits (ONE_TURN or
 * TWO_TURNS): a 20 s wait inside a test with the suite's 20 s default left nothing for the harness's
 * start, and under load the test timed out before the wait could say what was missing.
 */
const TURN_MS = 20_000;
const ONE_TURN = { timeout: budget(TURN_MS) };
const TWO_TURNS = { timeout: budget(TURN_MS, TURN_MS) };
/**
 * Two tests call `math`: its worker thread's start is waited for once, by its readiness, not inside
 * a turn's ceiling (under load it took most of one, and math-runner.ts gave up on it at 15 s); the
 * harnesses' close leaves that worker running (see test/helpers/math-worker.ts).
 */
vi.mock(import('../../src/tools/math-runner.js'), async (original) => ({
  ...(await original()),
  stopMath: async () => undefined,
}));
/** A turn that calls `math`, after waiting for its worker's readiness. */
const MATH_TURN = { timeout: budget(WARM_MATH_MS, TURN_MS) };
const turns = (n: number) =>
  waitFor(() => h?.events.filter((e) => e.event.type === 'turn_done').length === n, `${n} turns`, TURN_MS);
const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));
const deferredNames = DEFERRED_GROUPS.flatMap((g) => g.tools);

describe('deferred tools', () => {
  it(
    'the first request of a "hi" conversation with the default config is under 8 000 bytes and holds only the core tools',
    ONE_TURN,
    async () => {
      h = await startHarness();
      await h.send('hi');
      await turns(1);
      const body = request(0)?.body;
      expect(bytes(body)).toBeLessThan(8000);
      const names = offered(0);
      for (const core of [
        'read_file',
        'write_file',
        'edit_file',
        'search',
        'bash',
        'web_fetch',
        'remember',
        'recall',
        'ask_user_clarification',
        'activate_tools',
      ]) {
        expect(names).toContain(core);
      }
      for (const name of deferredNames) expect(names).not.toContain(name);
      const system = body.messages[0].content as string;
      expect(system).toMatch(
        /activate_tools \{"groups":\[\.\.\.\]\}.*jobs \(schedule_job, list_jobs, cancel_job, notify\).*agents \(task, plan\)/,
      );
      // One line.
      expect(system.split('\n').filter((l) => l.includes('schedule_job'))).toHaveLength(1);
    },
  );

  it('keeps the system prompt and the tool list byte-identical from one request to the next', TWO_TURNS, async () => {
    h = await startHarness();
    h.llm.push({ toolCalls: [{ name: 'list_files', arguments: '{}' }] }, { text: 'one' }, { text: 'two' });
    await h.send('hi');
    await turns(1);
    await h.send('and again');
    await turns(2);
    const [a, b, c] = [0, 1, 2].map((i) => request(i)?.body);
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
    expect(JSON.stringify(c.tools)).toBe(JSON.stringify(a.tools));
    expect(b.messages[0]).toEqual(a.messages[0]);
    expect(c.messages[0]).toEqual(a.messages[0]);
  });

  it(
    'a group switched on with activate_tools is offered and used in the same turn, after the tools offered before',
    MATH_TURN,
    async () => {
      await warmMathWorker();
      h = await startHarness();
      h.llm.push(
        { toolCalls: [{ name: 'activate_tools', arguments: '{"groups":["reference"]}' }] },
        { toolCalls: [{ name: 'math', arguments: '{"expression":"6 * 7"}' }] },
        { text: '42' },
      );
      await h.send('what is 6 times 7, exactly?');
      await turns(1);
      expect(offered(0)).not.toContain('math');
      expect(offered(1)).toContain('math');
      // Switching a group on appends: the tools offered before keep their place.
      expect(offered(1).slice(0, offered(0).length)).toEqual(offered(0));
      const results = request(2)
        ?.body.messages.filter((m: any) => m.role === 'tool')
        .map((m: any) => m.content);
      expect(results[0]).toMatch(/^Activated\. Available from your next step:\nreference: math, man, current_time/);
      expect(results[1]).toContain('42');
      expect(request(2)?.body.messages[0].content).toBe(request(0)?.body.messages[0].content);
      expect(h.channel.eventsOf('turn_done')[0]?.status).toBe('done');
    },
  );

  it(
    'a deferred tool called by name is switched on by the call and runs; a tool name stands for its group in activate_tools',
    MATH_TURN,
    async () => {
      await warmMathWorker();
      h = await startHarness();
      h.llm.push(
        { toolCalls: [{ name: 'math', arguments: '{"expression":"2 + 3"}' }] },
        { toolCalls: [{ name: 'activate_tools', arguments: '{"groups":["schedule_job"]}' }] },
        { text: 'done' },
      );
      await h.send('2+3?');
      await turns(1);
      const results = request(2)
        ?.body.messages.filter((m: any) => m.role === 'tool')
        .map((m: any) => m.content);
      expect(results[0]).toContain('5');
      expect(offered(1)).toContain('math');
      expect(results[1]).toMatch(/jobs: schedule_job, list_jobs, cancel_job, notify/);
      expect(offered(2)).toContain('schedule_job');
      const grants = await h.core.db.selectFrom('tool_grants').select('tool_group').execute();
      expect(grants.map((g) => g.tool_group).sort()).toEqual(['jobs', 'reference']);
    },
  );

  it('an unknown group is refused and grants nothing', ONE_TURN, async () => {
    h = await startHarness();
    h.llm.push({ toolCalls: [{ name: 'activate_tools', arguments: '{"groups":["nope"]}' }] }, { text: 'ok' });
    await h.send('x');
    await turns(1);
    const result = request(1)
      ?.body.messages.filter((m: any) => m.role === 'tool')
      .at(-1)?.content;
    expect(result).toMatch(
      /^Unknown tool group\(s\): nope\. Available groups: jobs, agents, planning, processes, reference, send\.$/,
    );
    expect(await h.core.db.selectFrom('tool_grants').selectAll().execute()).toEqual([]);
  });

  it('tools.deferred = false sends every tool every time', ONE_TURN, async () => {
    h = await startHarness({ overrides: { tools: { deferred: false } } });
    await h.send('hi');
    await turns(1);
    for (const name of ['schedule_job', 'task', 'math', 'write_todos']) expect(offered(0)).toContain(name);
    expect(offered(0)).not.toContain('activate_tools');
    expect(request(0)?.body.messages[0].content).not.toContain('More tool groups');
  });

  it(
    'the model sees a schema without validation-only keys, and the engine still validates with the full one',
    ONE_TURN,
    async () => {
      expect(
        modelSchema({
          type: 'object',
          properties: { pattern: { type: 'string', minLength: 1, pattern: '^a' }, n: { type: 'integer', maximum: 9 } },
          required: ['pattern'],
          additionalProperties: false,
        }),
      ).toEqual({
        type: 'object',
        properties: { pattern: { type: 'string' }, n: { type: 'integer' } },
        required: ['pattern'],
      });
      h = await startHarness();
      h.llm.push({ toolCalls: [{ name: 'bash', arguments: '{"command":"true","timeout":9999}' }] }, { text: 'ok' });
      await h.send('x');
      await turns(1);
      const result = request(1)
        ?.body.messages.filter((m: any) => m.role === 'tool')
        .at(-1)?.content;
      expect(result).toMatch(/^Error: invalid arguments for bash: timeout/);
    },
  );
});

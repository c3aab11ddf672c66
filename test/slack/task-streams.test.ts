// biome-ignore-all lint/suspicious/noExplicitAny: Block Kit JSON is loosely typed by nature
/**
 * Tool progress where replies stream natively (a thread): the tool calls in a row are tasks of one
 * streamed message (`task_update` chunks, in progress → complete / error), stopped before the
 * reply streams below it. A stream Slack expired is redrawn as a plan block; a workspace that
 * refuses task chunks gets task cards (here context lines: it refuses those too) for the run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { taskCardBlock } from '../../src/channels/slack/blocks.js';
import { StepMessageGone as TaskMessageGone } from '../../src/kit/index.js';
import { TaskStreams } from '../../src/channels/slack/task-stream.js';
import type { EmuMessage } from '../emulators/slack.js';
import { ALICE, type SlackStack, startSlackStack, visibleText } from './stack.js';
import { runStepsTurn, stepTool } from './steps.js';

describe('Slack tool progress in native streams', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  const runningTask = (label: string) =>
    stack.emu
      .botMessages('C1')
      .some((m) => (m.tasks ?? []).some((t) => t.title === label && t.status === 'in_progress'));

  const runTurn = () => runStepsTurn(stack);

  const calls = (method: string) => stack.emu.calls.filter((c) => c.method === method && c.status === 200);
  const chunksOf = (c: { args: Record<string, any> }) =>
    typeof c.args.chunks === 'string' ? JSON.parse(c.args.chunks) : c.args.chunks;

  it('the tool calls of a turn are tasks of one streamed message, the reply streams below it', async () => {
    stack = await startSlackStack('http', { tools: [stepTool(runningTask)] });
    const { messages } = await runTurn();
    expect(messages).toHaveLength(2);
    const [steps, reply] = messages as [EmuMessage, EmuMessage];
    expect(reply.text).toBe('all done');
    expect(steps.streaming).toBe(false);
    expect(steps.blocks ?? []).toEqual([]);
    expect(steps.tasks).toEqual([
      { type: 'task_update', id: 't1', title: 'step one', status: 'complete', output: 'did one' },
      { type: 'task_update', id: 't2', title: 'step two', status: 'error', output: 'boom' },
    ]);
    // Each task was first shown running.
    const first = (id: string) => steps.chunks!.find((c) => c.id === id);
    expect(first('t1')).toMatchObject({ status: 'in_progress', title: 'step one' });
    expect(first('t2')).toMatchObject({ status: 'in_progress', title: 'step two' });
    // No task card message, no context line: the one post is the short reply (posted whole, not
    // streamed); the steps message started with chunks, outside a DM for Alice, and was stopped first.
    expect(calls('chat.postMessage').map((c) => c.args.text)).toEqual(['all done']);
    const order = stack.emu.calls.filter((c) => c.method.startsWith('chat.')).map((c) => c.method);
    expect(order.indexOf('chat.stopStream')).toBeLessThan(order.indexOf('chat.postMessage'));
    const starts = calls('chat.startStream');
    expect(starts).toHaveLength(1);
    expect(chunksOf(starts[0]!)[0]).toMatchObject({ type: 'task_update', id: 't1' });
    expect(starts[0]!.args).toMatchObject({ recipient_user_id: ALICE });
    // The ledger: each tool line its own row, naming the message and its task.
    const rows = await stack.core.db
      .selectFrom('deliveries')
      .select(['status', 'refs'])
      .where('idem_key', 'like', 'tool:%')
      .execute();
    expect(rows.map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect(rows.map((r) => JSON.parse(r.refs!)[0].ref).sort()).toEqual([`${steps.ts}#t1`, `${steps.ts}#t2`]);
  });

  it('a steps message Slack expired is redrawn whole as a plan block', async () => {
    stack = await startSlackStack('http', { tools: [stepTool(runningTask, 900)] });
    stack.emu.streams.expiryMs = 600;
    const { messages } = await runTurn();
    const steps = messages.filter((m) => (m.tasks ?? []).length > 0);
    expect(steps.length).toBeGreaterThanOrEqual(1);
    const plans = steps.flatMap((m) => (m.blocks ?? []).filter((b) => b.type === 'plan'));
    expect(plans.length).toBeGreaterThanOrEqual(1);
    // Every step ends shown finished, in a plan block or a later stream, never left running.
    const finalOf = (label: string) => {
      for (const m of [...steps].reverse()) {
        const card = (m.blocks ?? [])
          .filter((b) => b.type === 'plan')
          .flatMap((b) => b.tasks)
          .find((t: any) => t.title === label);
        if (card) return card.status;
        const task = (m.tasks ?? []).find((t) => t.title === label);
        if (task) return task.status;
      }
      return undefined;
    };
    expect(finalOf('step one')).toBe('complete');
    expect(finalOf('step two')).toBe('error');
    expect(messages.at(-1)!.text).toBe('all done');
    const bad = await stack.core.db
      .selectFrom('deliveries')
      .select('status')
      .where('status', '!=', 'delivered')
      .execute();
    expect(bad).toEqual([]);
  });

  it('a workspace that refuses task chunks gets the old tool lines for the run, nothing lost', async () => {
    stack = await startSlackStack('http', {
      tools: [stepTool((label) => stack.emu.botMessages('C1').some((m) => visibleText(m) === `🔧 \`${label}\`…`))],
    });
    stack.emu.taskCards.refuse = true;
    const { messages } = await runTurn();
    expect(stack.channel.taskStreams.steps.native.refused).toBe('invalid_chunks');
    expect(messages.map((m) => visibleText(m))).toEqual([
      '✅ `step one` — did one',
      '❌ `step two` — boom',
      'all done',
    ]);
    // Offered as a chunk once; then the workspace's task card refusal, once.
    expect(stack.emu.calls.filter((c) => c.error === 'invalid_chunks')).toHaveLength(1);
  });

  it('after a restart a task is finished in its message while Slack streams it, else posted anew (gone)', async () => {
    stack = await startSlackStack('http');
    const user = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'hi' });
    const address = { slackChannel: 'C1', threadTs: user.ts, assistantThread: false };
    const fresh = () =>
      new TaskStreams({
        streams: stack.channel.streams,
        taskCards: () => true,
        log: stack.core.log,
      });
    const running = taskCardBlock({ title: 'step one', state: 'running', output: '' });
    const done = taskCardBlock({ title: 'step one', state: 'done', output: 'did one' });
    const ref = (await fresh().post(address, running))!;
    const [ts, id] = ref.split('#') as [string, string];
    // A new process knows nothing of the message: the task's last word stops the stream with it.
    await fresh().edit(address, { ts, id }, done);
    const msg = stack.emu.botMessages('C1', user.ts).find((m) => m.ts === ts)!;
    expect(msg.streaming).toBe(false);
    expect(msg.tasks).toEqual([
      { type: 'task_update', id: 't1', title: 'step one', status: 'complete', output: 'did one' },
    ]);
    // No longer streaming: the presenter is told to post it anew.
    await expect(fresh().edit(address, { ts, id }, done)).rejects.toBeInstanceOf(TaskMessageGone);
    expect(stack.channel.surface.classify(new TaskMessageGone('x')).kind).toBe('gone');
    // Finished in its message or told gone: never redrawn.
    expect(stack.emu.calls.filter((c) => c.method === 'chat.update')).toEqual([]);
  });

  it('with slack.streaming = "update" tool lines are task card messages (task-cards.test.ts)', async () => {
    stack = await startSlackStack('http', {
      overrides: { slack: { streaming: 'update' } },
      tools: [
        stepTool((label) =>
          stack.emu
            .botMessages('C1')
            .some((m) => (m.blocks ?? []).some((b) => b.type === 'task_card' && b.title === label)),
        ),
      ],
    });
    const { messages } = await runTurn();
    expect(messages).toHaveLength(3);
    expect(stack.emu.calls.some((c) => c.method === 'chat.startStream')).toBe(false);
  });
});

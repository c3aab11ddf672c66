// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deliveryCounts } from '../../src/store/repos/deliveries.js';
import { defineTool } from '../../src/tools/define.js';
import { blockAction } from '../emulators/slack-payloads.js';
import type { EmuMessage } from '../emulators/slack.js';
import { budget, times, WAIT_MS } from '../helpers/budgets.js';
import { dangerTool } from '../helpers/test-tools.js';
import { ALICE, BOB, type SlackStack, startSlackStack, visibleText, waitFor } from './stack.js';

function questionCard(stack: SlackStack, channel: string): EmuMessage | undefined {
  return stack.emu
    .botMessages(channel)
    .find((m) =>
      m.history[0]?.blocks?.some((b: any) => b.type === 'actions' && String(b.block_id).startsWith('question:')),
    );
}

function answerButtons(m: EmuMessage): Array<{ action_id: string; value: string; text: string }> {
  return (m.history[0]!.blocks ?? [])
    .filter((b: any) => b.type === 'actions')
    .flatMap((b: any) => b.elements.map((e: any) => ({ action_id: e.action_id, value: e.value, text: e.text.text })));
}

/**
 * The timeout of a test of `n` waits: each is a step of the in-process stack ({@link WAIT_MS},
 * `waitFor`'s default), and the test's budget is derived from how many it has (counted above each
 * test), not the suite's 20 s default that two or three of them exceed under load.
 */
const steps = (n: number) => ({ timeout: budget(...times(n, WAIT_MS)) });

const ask = (question: string, answers: string[]) => ({
  toolCalls: [{ name: 'ask_user_clarification', arguments: JSON.stringify({ question, suggested_answers: answers }) }],
});

describe.each(['http', 'socket'] as const)('Slack threads, tools and questions (%s mode)', (mode) => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  // Steps: the stack's start, the running line, the final reply.
  it(
    'with slack.task_cards = "off", shows tool progress as a context line that ends with ✅ and the summary',
    steps(3),
    async () => {
      // `echo` that finishes only once its 🔧 line is in the thread: an instant tool may finish
      // before the first post (then the line is posted finished, which is right but shows no progress).
      let shown: () => boolean = () => true;
      const slowEcho = defineTool({
        name: 'echo',
        description: 'Echo text back.',
        schema: z.object({ text: z.string() }),
        meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'text' },
        describe: (a) => `echo ${a.text}`,
        async execute(a) {
          await waitFor(shown, 'the running tool line');
          return { output: `echo: ${a.text}` };
        },
      });
      stack = await startSlackStack(mode, {
        tools: [slowEcho, dangerTool],
        overrides: { slack: { task_cards: 'off' } },
      });
      shown = () =>
        stack.emu
          .botMessages('C1')
          .some((m) => m.blocks?.[0]?.type === 'context' && visibleText(m) === '🔧 `echo ping`…');
      stack.llm.push(
        { toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text: 'ping' }) }] },
        { text: 'echoed' },
      );
      const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'echo ping', mention: true });
      await stack.sendEvent(mention);
      await waitFor(() => stack.findBot('C1', 'echoed', mention.ts).length, 'final reply');
      const line = stack.findBot('C1', 'echo ping', mention.ts).find((m) => m.blocks?.[0]?.type === 'context');
      expect(line).toBeDefined();
      expect(visibleText(line!.history[0]!)).toBe('🔧 `echo ping`…');
      expect(visibleText(line!)).toBe('✅ `echo ping` — echo: ping');
      // order in the thread: tool line, then the reply
      const order = stack.emu.botMessages('C1', mention.ts).map((m) => visibleText(m));
      expect(order).toEqual(['✅ `echo ping` — echo: ping', 'echoed']);
    },
  );

  // Steps: the stack's start, the card, the ephemeral to Bob, the final reply.
  it('asks a question with one button per answer; a click by the requester answers it', steps(4), async () => {
    stack = await startSlackStack(mode);
    stack.llm.push(ask('Which colour?', ['red', 'blue']), { text: 'blue it is' });
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'paint it', mention: true });
    await stack.sendEvent(mention);
    const card = await waitFor(() => questionCard(stack, 'C1'), 'question card');
    expect(visibleText(card)).toContain('Which colour?');
    const btns = answerButtons(card);
    expect(btns.map((b) => b.text)).toEqual(['red', 'blue']);
    const blue = btns[1]!;
    // Bob may not answer Alice's question
    await stack.emu.deliver(
      'interactive',
      blockAction({
        user: BOB,
        channel: 'C1',
        messageTs: card.ts,
        threadTs: card.thread_ts,
        actionId: blue.action_id,
        value: blue.value,
      }),
    );
    await waitFor(() => stack.emu.ephemerals.find((e) => e.user === BOB), 'ephemeral to Bob');
    expect((await stack.core.db.selectFrom('questions').select('status').executeTakeFirstOrThrow()).status).toBe(
      'pending',
    );
    await stack.emu.deliver(
      'interactive',
      blockAction({
        user: ALICE,
        channel: 'C1',
        messageTs: card.ts,
        threadTs: card.thread_ts,
        actionId: blue.action_id,
        value: blue.value,
      }),
    );
    await waitFor(() => stack.findBot('C1', 'blue it is', mention.ts).length, 'final reply');
    expect(visibleText(card)).toContain('> blue');
    expect(visibleText(card)).toContain(`<@${ALICE}>`);
    expect(card.blocks?.some((b: any) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(stack.llm.chatRequests()[1]!.body.messages)).toContain('The user answered: blue');
  });

  // Steps: the stack's start, the card, the final reply.
  it('takes a thread reply as the answer to a pending question', steps(3), async () => {
    stack = await startSlackStack(mode);
    stack.llm.push(ask('Which size?', ['S', 'M']), { text: 'noted' });
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'order a shirt', mention: true });
    await stack.sendEvent(mention);
    const card = await waitFor(() => questionCard(stack, 'C1'), 'question card');
    await stack.sendEvent(
      stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'XL please', threadTs: mention.ts }),
    );
    await waitFor(() => stack.findBot('C1', 'noted', mention.ts).length, 'final reply');
    expect(visibleText(card)).toContain('> XL please');
    expect(stack.llm.chatRequests()).toHaveLength(2);
  });

  // Steps: the stack's start, the prompts, the reply, the status cleared.
  it(
    'offers suggested prompts in an assistant thread and shows a thinking status while working',
    steps(4),
    async () => {
      stack = await startSlackStack(mode);
      const threadTs = '1700000000.000100';
      await stack.sendEvent({
        type: 'assistant_thread_started',
        assistant_thread: { user_id: ALICE, channel_id: 'D5', thread_ts: threadTs, context: {} },
        event_ts: threadTs,
      });
      const prompts = await waitFor(
        () => stack.emu.suggestedPrompts.find((p) => p.thread_ts === threadTs),
        'suggested prompts',
      );
      expect(prompts.channel_id).toBe('D5');
      expect(prompts.prompts.length).toBeGreaterThan(0);
      // Over a second of work: the status shows (a quicker reply would show none).
      stack.llm.push({ text: 'assistant reply', chunkSize: 3, delayMs: 250 });
      await stack.sendEvent(stack.emu.userMessage({ channel: 'D5', user: ALICE, text: 'hello assistant', threadTs }));
      await waitFor(() => stack.findBot('D5', 'assistant reply', threadTs).length, 'reply in the assistant thread');
      expect(stack.findBot('D5', 'assistant reply')[0]!.thread_ts).toBe(threadTs);
      await waitFor(() => stack.emu.statuses.some((s) => s.status === ''), 'status cleared');
      const statuses = stack.emu.statuses.filter((s) => s.thread_ts === threadTs).map((s) => s.status);
      expect(statuses).toEqual(['is thinking…', '']);
    },
  );

  // Steps: the stack's start, the reply, quiescing, the restart (the socket closed, connected again), the message.
  it('after a restart, writes into a DM in the assistant thread the user last wrote in', steps(6), async () => {
    stack = await startSlackStack(mode);
    const threadTs = '1700000000.000300';
    stack.llm.push({ text: 'before the restart' });
    await stack.sendEvent(
      stack.emu.userMessage({ channel: 'D6', user: ALICE, text: 'hello', threadTs, channelType: 'im' }),
    );
    await waitFor(() => stack.findBot('D6', 'before the restart', threadTs).length, 'reply in the thread');
    await stack.quiesce();
    await stack.restart();
    // Nothing came in since the restart: where the message goes is what the last process remembered.
    await stack.core.say({ channel: 'slack', chatKey: 'D6', threadKey: '' }, 'test:after-restart', {
      type: 'text',
      markdown: 'after the restart',
    });
    const [message] = await waitFor(
      () => (stack.findBot('D6', 'after the restart').length ? stack.findBot('D6', 'after the restart') : null),
      'the message after the restart',
    );
    expect(message!.thread_ts).toBe(threadTs);
  });

  // Steps: the stack's start, two replies, two retries looked, two quiescings.
  it('does not post twice when a post landed but its response was lost', steps(7), async () => {
    /** Every delivery row settled (the retry after the lost answer included). */
    const settledRows = async () => {
      const counts = await deliveryCounts(stack.core.db);
      return counts.pending + counts.sending + counts.streaming === 0;
    };
    stack = await startSlackStack(mode);
    stack.emu.dropResponse('chat.postMessage', 1);
    stack.llm.push({ text: 'survives a dropped connection' }, { text: 'threaded survivor' });
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi' }));
    await waitFor(() => stack.findBot('D1', 'survives a dropped connection').length, 'reply');
    // The retry after the lost answer looks in the chat first (it happens after the back-off).
    await waitFor(
      async () => (await settledRows()) && stack.emu.calls.some((c) => c.method === 'conversations.history'),
      'the retry looked',
    );
    await stack.quiesce();
    expect(stack.emu.botMessages('D1')).toHaveLength(1);

    stack.emu.dropResponse('chat.postMessage', 1);
    const mention = stack.emu.userMessage({ channel: 'C3', user: ALICE, text: 'and in a thread?', mention: true });
    await stack.sendEvent(mention);
    await waitFor(() => stack.findBot('C3', 'threaded survivor', mention.ts).length, 'threaded reply');
    await waitFor(
      async () => (await settledRows()) && stack.emu.calls.some((c) => c.method === 'conversations.replies'),
      'the retry looked in the thread',
    );
    await stack.quiesce();
    expect(stack.emu.botMessages('C3')).toHaveLength(1);
    expect(stack.emu.calls.filter((c) => c.method === 'conversations.replies')).not.toHaveLength(0);
  });
});

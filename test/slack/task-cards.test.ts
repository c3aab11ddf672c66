// biome-ignore-all lint/suspicious/noExplicitAny: Block Kit JSON is loosely typed by nature
/**
 * Tool progress as Block Kit task cards (`slack.task_cards = "auto"`, the default): each tool
 * call is one message whose `task_card` goes from in_progress to complete or error. A workspace
 * that refuses task cards (`invalid_blocks`) gets context lines instead, for the rest of the run,
 * with the refused line sent again that way; `"off"` is covered in threads-and-questions.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmuMessage } from '../emulators/slack.js';
import { type SlackStack, startSlackStack, visibleText } from './stack.js';
import { runStepsTurn, stepTool } from './steps.js';

const hasTaskCard = (blocks: any[] | undefined) => (blocks ?? []).some((b) => b?.type === 'task_card');
const cardOf = (blocks: any[] | undefined) => (blocks ?? []).find((b) => b?.type === 'task_card');

describe('Slack task cards', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  const runTurn = async () => (await runStepsTurn(stack)).messages;

  it('shows each tool call as a task card going in_progress → complete / error, nothing doubled', async () => {
    stack = await startSlackStack('http', {
      // Where replies are no native streams (chat.update): tool lines are messages of their own.
      // One tool at a time: two calls run side by side may show their lines in either order.
      overrides: { slack: { streaming: 'update' }, tools: { parallel: 1 } },
      tools: [
        stepTool((label) =>
          stack.emu
            .botMessages('C1')
            .some((m) => cardOf(m.blocks)?.title === label && cardOf(m.blocks)?.status === 'in_progress'),
        ),
      ],
    });
    const messages = await runTurn();
    const cards = messages.filter((m) => hasTaskCard(m.blocks));
    // One message a tool call, each one card and nothing else; no context line beside them.
    expect(cards).toHaveLength(2);
    expect(messages.filter((m) => m.blocks?.some((b: any) => b.type === 'context'))).toHaveLength(0);
    for (const m of cards) expect(m.history.every((h) => h.blocks?.length === 1 && hasTaskCard(h.blocks))).toBe(true);
    const [one, two] = cards as [EmuMessage, EmuMessage];
    expect(cardOf(one.history[0]!.blocks)).toMatchObject({ title: 'step one', status: 'in_progress' });
    expect(visibleText(one)).toBe('[complete] step one — did one');
    expect(cardOf(two.history[0]!.blocks)).toMatchObject({ title: 'step two', status: 'in_progress' });
    expect(visibleText(two)).toBe('[error] step two — boom');
    // The fallback text still says it in words (notifications, search).
    expect(one.text).toBe('✅ step one');
    expect(two.text).toBe('❌ step two');
    // Order in the thread: the two cards, then the reply, once.
    expect(messages.map((m) => visibleText(m))).toEqual([
      '[complete] step one — did one',
      '[error] step two — boom',
      'all done',
    ]);
    expect(stack.channel.surface.taskCards.inForce).toBe(true);
  });

  it('falls back to context lines once when the workspace refuses task cards, losing nothing', async () => {
    stack = await startSlackStack('http', {
      // Where replies are no native streams (chat.update): tool lines are messages of their own.
      // One tool at a time: two calls run side by side may show their lines in either order.
      overrides: { slack: { streaming: 'update' }, tools: { parallel: 1 } },
      tools: [stepTool((label) => stack.emu.botMessages('C1').some((m) => visibleText(m) === `🔧 \`${label}\`…`))],
    });
    stack.emu.taskCards.refuse = true;
    const messages = await runTurn();
    // Slack was offered a task card once: the first line's post, refused and sent again as a context line.
    const offered = stack.emu.calls.filter((c) => {
      const blocks = typeof c.args.blocks === 'string' ? JSON.parse(c.args.blocks) : c.args.blocks;
      return hasTaskCard(blocks);
    });
    expect(offered).toHaveLength(1);
    expect(offered[0]!.method).toBe('chat.postMessage');
    expect(stack.channel.surface.taskCards.refused).toBe('invalid_blocks');
    expect(stack.channel.surface.taskCards.inForce).toBe(false);
    expect(messages.map((m) => visibleText(m))).toEqual([
      '✅ `step one` — did one',
      '❌ `step two` — boom',
      'all done',
    ]);
    expect(messages.every((m) => !m.history.some((h) => hasTaskCard(h.blocks)))).toBe(true);
    expect(visibleText(messages[0]!.history[0]!)).toBe('🔧 `step one`…');
  });

  it('a refusal met by an update finishes that line as a context line', async () => {
    // The workspace stops taking task cards once the first card is up (its update is refused).
    stack = await startSlackStack('http', {
      // Where replies are no native streams (chat.update): tool lines are messages of their own.
      // One tool at a time: two calls run side by side may show their lines in either order.
      overrides: { slack: { streaming: 'update' }, tools: { parallel: 1 } },
      tools: [
        stepTool((label) => {
          const shown = stack.emu.botMessages('C1').some((m) => cardOf(m.history[0]!.blocks)?.title === label);
          if (shown) stack.emu.taskCards.refuse = true;
          return shown || stack.emu.botMessages('C1').some((m) => visibleText(m) === `🔧 \`${label}\`…`);
        }),
      ],
    });
    const messages = await runTurn();
    const [one, two] = messages as [EmuMessage, EmuMessage];
    expect(cardOf(one.history[0]!.blocks)).toMatchObject({ title: 'step one', status: 'in_progress' });
    expect(visibleText(one)).toBe('✅ `step one` — did one');
    expect(visibleText(two)).toBe('❌ `step two` — boom');
    expect(messages.map((m) => visibleText(m))).toEqual([
      '✅ `step one` — did one',
      '❌ `step two` — boom',
      'all done',
    ]);
    expect(stack.channel.surface.taskCards.refused).toBe('invalid_blocks');
  });
});

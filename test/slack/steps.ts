/**
 * The two-step turn of the tool-progress tests (task cards, task streams): a `step` tool that
 * finishes only once its running line is visible, and a turn of two calls (the second fails)
 * followed by the reply `all done`, @mentioned in C1.
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define.js';
import type { EmuMessage } from '../emulators/slack.js';
import { ALICE, type SlackStack, waitFor } from './stack.js';

/** A `step` tool that finishes once `shown` says its running line is visible, after `sleepMs`. */
export function stepTool(shown: (label: string) => boolean, sleepMs = 0) {
  return defineTool({
    name: 'step',
    description: 'Run a step.',
    schema: z.object({ name: z.string(), fail: z.boolean().optional() }),
    meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'name' },
    describe: (a) => `step ${a.name}`,
    async execute(a) {
      await waitFor(() => shown(`step ${a.name}`), `the running line of step ${a.name}`);
      if (sleepMs) await new Promise((r) => setTimeout(r, sleepMs));
      return a.fail
        ? { output: 'boom', summary: 'boom', status: 'failed' as const }
        : { output: `did ${a.name}`, summary: `did ${a.name}` };
    },
  });
}

/** Two `step` calls in one turn (the second fails), then the reply; resolves once all is shown. */
export async function runStepsTurn(stack: SlackStack): Promise<{ thread: string; messages: EmuMessage[] }> {
  stack.llm.push(
    {
      toolCalls: [
        { name: 'step', arguments: JSON.stringify({ name: 'one' }) },
        { name: 'step', arguments: JSON.stringify({ name: 'two', fail: true }) },
      ],
    },
    { text: 'all done' },
  );
  const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'run the steps', mention: true });
  await stack.sendEvent(mention);
  await waitFor(() => stack.findBot('C1', 'all done', mention.ts).length, 'the final reply');
  await stack.quiesce();
  return { thread: mention.ts, messages: stack.emu.botMessages('C1', mention.ts) };
}

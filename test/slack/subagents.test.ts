// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
/** A sub-agent's approval in a Slack thread: labelled with the child, decided only by the requester. */
import { afterEach, describe, expect, it } from 'vitest';
import { blockAction } from '../emulators/slack-payloads.js';
import { dangerTool, echoTool, runs } from '../helpers/test-tools.js';
import { ALICE, BOB, type SlackStack, startSlackStack, visibleText, waitFor } from './stack.js';

let stack: SlackStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const tools = [echoTool, dangerTool].map((tool) => ({ ...tool, meta: { ...tool.meta, subAgent: true } }));

describe('Slack: sub-agents', () => {
  it("shows a child's approval card in the thread, labelled; only the requester's click counts", async () => {
    runs.danger = 0;
    stack = await startSlackStack('http', { tools });
    const s = stack;
    s.llm.push(
      { toolCalls: [{ name: 'task', arguments: '{"prompt":"touch z.txt for me"}' }] },
      { toolCalls: [{ name: 'danger', arguments: '{"target":"z.txt"}' }] },
      { text: 'child touched it' },
      { text: 'all done here' },
    );
    const mention = s.emu.userMessage({ channel: 'C1', user: ALICE, text: 'delegate', mention: true });
    await s.sendEvent(mention);
    const card = await waitFor(
      () =>
        s.emu
          .botMessages('C1', mention.ts)
          .find((m) =>
            m.history[0]?.blocks?.some((b: any) => b.type === 'actions' && String(b.block_id).startsWith('approval:')),
          ),
      'approval card',
    );
    expect(visibleText(card)).toContain('🤖 task: touch z.txt for me · danger z.txt');
    const approval = await s.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    const click = (user: string) =>
      s.emu.deliver(
        'interactive',
        blockAction({
          user,
          channel: card.channel,
          messageTs: card.ts,
          threadTs: card.thread_ts,
          actionId: 'sb_approve_once',
          value: approval.id,
        }),
      );
    await click(BOB);
    // Bob is told he may not decide (the refusal is the event that proves the click was handled),
    // and nothing changed: the approval is pending and the tool has not run.
    const refusal = await waitFor(() => s.emu.ephemerals.find((e) => e.user === BOB), 'the refusal shown to Bob');
    expect(refusal.text).toContain('Only the person who started this turn');
    expect((await s.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe('pending');
    expect(runs.danger ?? 0).toBe(0);
    await click(ALICE);
    await waitFor(
      () => s.emu.botMessages('C1', mention.ts).some((m) => m.text.includes('all done here')),
      'the parent reply',
    );
    const result = await s.core.db
      .selectFrom('tool_calls')
      .select('result')
      .where('name', '=', 'task')
      .executeTakeFirstOrThrow();
    expect(result.result).toBe('Sub-agent summary:\nchild touched it');
    expect(runs.danger).toBe(1);
  });
});

/** A sub-agent's approval in a Telegram group: labelled with the child, decided only by the requester. */
import { afterEach, describe, expect, it } from 'vitest';
import { testTools } from '../helpers/test-tools.js';
import {
  alice,
  bob,
  button,
  startTelegramTest,
  type TelegramTest,
  waitFor,
  waitForCard,
  waitForText,
} from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const group = { chatId: -100777, chatType: 'supergroup' as const };
const tools = testTools.map((tool) => ({ ...tool, meta: { ...tool.meta, subAgent: true } }));

describe('telegram: sub-agents', () => {
  it("shows a child's approval card in the parent chat, labelled; only the requester's tap counts", async () => {
    t = await startTelegramTest({ tools });
    t.llm.push(
      { toolCalls: [{ name: 'task', arguments: '{"prompt":"touch z.txt for me"}' }] },
      { toolCalls: [{ name: 'danger', arguments: '{"target":"z.txt"}' }] },
      { text: 'child touched it' },
      { text: 'all done here' },
    );
    const text = '@switchboard_test_bot delegate';
    t.emu.sendText(alice, text, { ...group, entities: [{ type: 'mention', offset: 0, length: 21 }] });
    const card = await waitForCard(t.emu, group.chatId, 'child approval card');
    expect(card.plain).toContain('🤖 task: touch z.txt for me · danger z.txt');
    const cb = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'answer to bob');
    // Refused to Bob alone, as an ephemeral message of the group.
    expect(t.emu.ephemerals(group.chatId)).toEqual([
      expect.objectContaining({
        receiver_user_id: bob.id,
        callback_query_id: cb,
        plain: expect.stringMatching(/not allowed/),
      }),
    ]);
    t.emu.tap(alice, group.chatId, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, group.chatId, (p) => p === 'all done here', 'the parent reply');
    const result = await t.h.core.db
      .selectFrom('tool_calls')
      .select('result')
      .where('name', '=', 'task')
      .executeTakeFirstOrThrow();
    expect(result.result).toBe('Sub-agent summary:\nchild touched it');
  });
});

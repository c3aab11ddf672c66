/**
 * Authority in a Telegram group: Bob (allowed, not the requester, not an admin) cannot cancel
 * Alice's work with /stop or /new; he is told why, and Alice's approval stays pending. Alice (the
 * requester) and an admin can.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/builtins/bash.js';
import {
  alice,
  bob,
  button,
  groupChat,
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

const { group, mention } = groupChat(-100777);
const command = (text: string) => ({
  ...group,
  entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]?.length ?? 1 }],
});

async function approvalStatus(t: TelegramTest): Promise<string> {
  return (await t.h.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status;
}

/** Alice asks for `ls` in the group; resolves with her waiting bash card. */
async function aliceWaitsOnBash(t: TelegramTest) {
  t.llm.push({ toolCalls: [{ name: 'bash', arguments: '{"command":"ls"}' }] }, { text: 'listed for alice' });
  const m = mention('list the files');
  t.emu.sendText(alice, m.text, m);
  return waitForCard(t.emu, group.chatId, "Alice's bash card");
}

describe('telegram: who may stop or restart work in a group', () => {
  it("Bob's /stop does not cancel Alice's waiting bash approval; he is told whose it is", async () => {
    t = await startTelegramTest({ tools: [bashTool] });
    const card = await aliceWaitsOnBash(t);
    expect(card.plain).toContain('bash ls');
    t.emu.sendText(bob, '/stop', command('/stop'));
    const refusal = await waitForText(t.emu, group.chatId, (p) => p.includes('Not stopped'), 'refusal for bob');
    expect(refusal.plain).toContain(
      `the running turn was started by telegram:${alice.id}; only they or an admin can stop it`,
    );
    expect(await approvalStatus(t)).toBe('pending');
    expect(card.reply_markup).toBeTruthy();

    t.emu.sendText(bob, '/new', command('/new'));
    const noNew = await waitForText(
      t.emu,
      group.chatId,
      (p) => p.includes('Not started afresh'),
      '/new refusal for bob',
    );
    expect(noNew.plain).toContain(`work of telegram:${alice.id} is running or queued here`);
    expect(await approvalStatus(t)).toBe('pending');

    // The card still works for Alice.
    t.emu.tap(alice, group.chatId, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, group.chatId, (p) => p === 'listed for alice', 'reply after approval');
    expect(await approvalStatus(t)).toBe('approved');
  });

  it('Alice (the requester) can stop her own turn; an admin can stop anyone’s', async () => {
    t = await startTelegramTest({ tools: [bashTool], overrides: { access: { admins: [`telegram:${bob.id}`] } } });
    await aliceWaitsOnBash(t);
    t.emu.sendText(bob, '/stop', command('/stop'));
    await waitFor(async () => (await approvalStatus(t as TelegramTest)) === 'cancelled', 'cancelled by the admin');
    await t.close();

    t = await startTelegramTest({ tools: [bashTool] });
    await aliceWaitsOnBash(t);
    t.emu.sendText(alice, '/stop', command('/stop'));
    await waitFor(async () => (await approvalStatus(t as TelegramTest)) === 'cancelled', 'cancelled by alice');
  });
});

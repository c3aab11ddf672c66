/**
 * Notices meant for one person in a Telegram group go as ephemeral messages only that person
 * sees (`ephemeral_message_parameters.receiver_user_id`): a refused tap on someone else's card,
 * a stranger's pairing code. A Bot API server that refuses the field, or drops it and posts to
 * everyone, is noticed once and the old way is used for the rest of the run; private chats are
 * unchanged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runs } from '../helpers/test-tools.js';
import {
  alice,
  bob,
  button,
  groupChat,
  startTelegramTest,
  stranger,
  type TelegramTest,
  texts,
  waitFor,
  waitForCard,
  waitForText,
} from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const { group, mention } = groupChat(-100888);

async function approvalStatus(t: TelegramTest): Promise<string> {
  return (await t.h.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status;
}

/** Alice asks for the dangerous tool in the group; resolves with her approval card. */
async function aliceCard(t: TelegramTest) {
  t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"g.txt"}' }] }, { text: 'touched for alice' });
  const m = mention('touch g.txt');
  t.emu.sendText(alice, m.text, m);
  return waitForCard(t.emu, group.chatId, "Alice's card");
}

/** Calls that asked for an ephemeral message. */
function ephemeralCalls(t: TelegramTest) {
  return t.emu.calls.filter((c) => c.method === 'sendMessage' && c.params.ephemeral_message_parameters);
}

describe('telegram: per-person notices in groups as ephemeral messages', () => {
  it("a stranger tapping Approve on Alice's card gets a refusal only they see; the card is unchanged", async () => {
    t = await startTelegramTest();
    const before = runs.danger ?? 0;
    const card = await aliceCard(t);
    const publicBefore = texts(t.emu, group.chatId).length;
    const deny = button(card, 'Deny');
    t.emu.join(group.chatId, stranger);
    const cb = t.emu.tap(stranger, group.chatId, card.message_id, button(card, 'Approve'));
    const [refusal] = await waitFor(
      () => (t?.emu.ephemerals(group.chatId).length ? t.emu.ephemerals(group.chatId) : undefined),
      'ephemeral refusal',
    );
    expect(refusal).toMatchObject({ receiver_user_id: stranger.id, callback_query_id: cb, parse_mode: 'HTML' });
    expect(refusal?.plain).toMatch(/not allowed/);
    // The tap is answered without an alert (the spinner stops); nothing is posted for everyone.
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'tap answered');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)).toMatchObject({ show_alert: false });
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)?.text).toBeUndefined();
    expect(texts(t.emu, group.chatId)).toHaveLength(publicBefore);
    expect(card.history).toHaveLength(1);
    expect(card.reply_markup).toBeTruthy();
    expect(await approvalStatus(t)).toBe('pending');
    expect((runs.danger ?? 0) - before).toBe(0);

    // Alice still decides her card; her tap is a toast as before, no ephemeral message.
    const ok = t.emu.tap(alice, group.chatId, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, group.chatId, (p) => p === 'touched for alice', 'reply after approval');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === ok)).toMatchObject({ text: 'Approved.' });
    expect(t.emu.ephemerals(group.chatId)).toHaveLength(1);
    // A late tap by Bob: refused to him alone again.
    const late = t.emu.tap(bob, group.chatId, card.message_id, deny);
    await waitFor(() => t?.emu.ephemerals(group.chatId).find((e) => e.callback_query_id === late), 'late refusal');
    expect(t.emu.ephemerals(group.chatId).at(-1)).toMatchObject({
      receiver_user_id: bob.id,
      plain: expect.stringMatching(/not allowed/),
    });
  });

  it("a stranger's pairing code in a group is shown to them alone; off, it is posted as before", async () => {
    t = await startTelegramTest();
    const m = mention('let me in');
    t.emu.sendText(stranger, m.text, m);
    const [code] = await waitFor(
      () => (t?.emu.ephemerals(group.chatId).length ? t.emu.ephemerals(group.chatId) : undefined),
      'ephemeral pairing code',
    );
    expect(code).toMatchObject({ receiver_user_id: stranger.id, plain: expect.stringContaining('pairing code') });
    expect(code?.callback_query_id).toBeUndefined();
    expect(texts(t.emu, group.chatId)).toEqual([]);
    await t.close();

    t = await startTelegramTest({ telegram: { ephemeral_notices: 'off' } });
    t.emu.sendText(stranger, m.text, m);
    await waitForText(t.emu, group.chatId, (p) => p.includes('pairing code'), 'pairing code posted in the group');
    expect(t.emu.ephemerals(group.chatId)).toEqual([]);
    expect(ephemeralCalls(t)).toEqual([]);
  });

  it('a server that refuses the field: noticed once, then alerts and group messages for the rest of the run', async () => {
    t = await startTelegramTest();
    t.emu.ephemeralSupport('refuse');
    const card = await aliceCard(t);
    const first = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === first), 'first refusal');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === first)).toMatchObject({
      show_alert: true,
      text: expect.stringMatching(/not allowed/),
    });
    const second = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Deny'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === second), 'second refusal');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === second)).toMatchObject({ show_alert: true });
    // A stranger's pairing code goes into the group, as without ephemeral messages.
    const m = mention('let me in');
    t.emu.sendText(stranger, m.text, m);
    await waitForText(t.emu, group.chatId, (p) => p.includes('pairing code'), 'pairing code in the group');
    // Tried once; never again this run.
    expect(ephemeralCalls(t)).toHaveLength(1);
    expect(t.emu.ephemerals(group.chatId)).toEqual([]);
    expect(t.channel().surface.ephemeral.refused).toMatch(/^400 /);
    expect(await approvalStatus(t)).toBe('pending');
  });

  it('a server that drops the field (the notice went to everyone): the copy is deleted, an alert instead', async () => {
    t = await startTelegramTest();
    t.emu.ephemeralSupport('ignore');
    const card = await aliceCard(t);
    const publicBefore = texts(t.emu, group.chatId).length;
    const cb = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'refusal');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)).toMatchObject({ show_alert: true });
    // The public copy was deleted; the group sees nothing new.
    expect(t.emu.calls.filter((c) => c.method === 'deleteMessage')).toHaveLength(1);
    expect(texts(t.emu, group.chatId)).toHaveLength(publicBefore);
    const again = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === again), 'second refusal');
    expect(ephemeralCalls(t)).toHaveLength(1);
  });

  it('private chats are unchanged: a refused tap is an alert, the flood notice a message', async () => {
    t = await startTelegramTest({ overrides: { access: { rate_limit_per_minute: 1 } } });
    t.llm.push({ text: 'hi alice' });
    t.emu.sendText(alice, 'one');
    t.emu.sendText(alice, 'two');
    await waitForText(t.emu, alice.id, (p) => p.includes('too fast'), 'flood notice in the private chat');
    const junk = t.emu.tap(alice, alice.id, texts(t.emu, alice.id)[0]?.message_id ?? 0, 'not-ours');
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === junk), 'alert');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === junk)).toMatchObject({ show_alert: true });
    expect(ephemeralCalls(t)).toEqual([]);
  });

  it('the flood notice in a group goes to the sender alone', async () => {
    t = await startTelegramTest({ overrides: { access: { rate_limit_per_minute: 1 } } });
    t.llm.push({ text: 'first answer' });
    const one = mention('one');
    const two = mention('two');
    t.emu.sendText(alice, one.text, one);
    t.emu.sendText(alice, two.text, two);
    await waitFor(() => t?.emu.ephemerals(group.chatId).find((e) => e.plain.includes('too fast')), 'flood notice');
    expect(t.emu.ephemerals(group.chatId)).toEqual([
      expect.objectContaining({ receiver_user_id: alice.id, plain: expect.stringContaining('too fast') }),
    ]);
    expect(texts(t.emu, group.chatId).filter((m) => m.plain.includes('too fast'))).toEqual([]);
  });
});

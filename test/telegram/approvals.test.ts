import { afterEach, describe, expect, it } from 'vitest';
import { deliveredCardRefs } from '../helpers/deliveries.js';
import { runs } from '../helpers/test-tools.js';
import {
  alice,
  bob,
  button,
  groupChat,
  startTelegramTest,
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

const { group, mention } = groupChat(-100555);

async function approvalRow(t: TelegramTest) {
  return t.h.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
}

describe('telegram: approvals', () => {
  it('a tap by the requester approves and runs the tool; the card shows outcome and who', async () => {
    t = await startTelegramTest();
    const before = runs.danger ?? 0;
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x.txt"}' }] }, { text: 'done touching' });
    t.emu.sendText(alice, 'touch x.txt');
    const card = await waitForCard(t.emu, alice.id, 'approval card');
    expect(card.plain).toContain('Approval needed');
    expect(card.plain).toContain('danger x.txt');
    expect(card.plain).toContain('would touch x.txt');
    const labels = card.reply_markup.inline_keyboard.map((row: Array<{ text: string }>) => row.map((b) => b.text));
    expect(labels).toEqual([
      ['✅ Approve', '❌ Deny'],
      ['🔁 This session', '♾ Always: danger on x.txt'],
    ]);
    const refs = await waitFor(
      async () => deliveredCardRefs(t!.h.core.db, (await approvalRow(t as TelegramTest)).id),
      'card delivered',
    );
    expect(refs).toEqual([`${alice.id}:${card.message_id}`]);

    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, alice.id, (p) => p === 'done touching', 'final reply');
    expect((runs.danger ?? 0) - before).toBe(1);
    await waitFor(() => !card.reply_markup, 'buttons removed');
    expect(card.plain).toContain('Approved');
    expect(card.plain).toContain('by Alice');
    expect(t.emu.callbackAnswers.at(-1)).toMatchObject({ text: 'Approved.', show_alert: false });
  });

  it('a tap by another user is refused with an alert (ephemeral notices off) and changes nothing', async () => {
    // In a group a refusal is an ephemeral message by default (ephemeral.test.ts); off, an alert as before.
    t = await startTelegramTest({ telegram: { ephemeral_notices: 'off' } });
    const before = runs.danger ?? 0;
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"y.txt"}' }] }, { text: 'group done' });
    const m = mention('touch y.txt');
    t.emu.sendText(alice, m.text, m);
    const card = await waitForCard(t.emu, group.chatId, 'approval card in group');
    const denyData = button(card, 'Deny');
    const cb = t.emu.tap(bob, group.chatId, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'alert for bob');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)).toMatchObject({ show_alert: true });
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)?.text).toMatch(/not allowed/);
    expect(card.reply_markup).toBeTruthy();
    expect(card.history).toHaveLength(1);
    expect((await approvalRow(t)).status).toBe('pending');
    expect((runs.danger ?? 0) - before).toBe(0);
    expect(t.emu.ephemerals(group.chatId)).toEqual([]);

    // The requester still can.
    t.emu.tap(alice, group.chatId, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, group.chatId, (p) => p === 'group done', 'reply after alice approves');
    expect((runs.danger ?? 0) - before).toBe(1);
    // A late second tap is told it was already decided.
    const late = t.emu.tap(alice, group.chatId, card.message_id, denyData);
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === late), 'late tap answer');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === late)?.text).toMatch(/already decided/);
  });

  it('a tap on a decided card’s message the ledger did not know is refused, and the presenter redraws that message at once', async () => {
    // No sweep meanwhile: the redraw must not wait for the periodic pass over open rows.
    t = await startTelegramTest({ sweepIntervalMs: 600_000 });
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"s.txt"}' }] }, { text: 'stale done' });
    t.emu.sendText(alice, 'touch s.txt');
    const card = await waitForCard(t.emu, alice.id, 'approval card');
    const id = (await approvalRow(t)).id;
    await waitFor(() => deliveredCardRefs(t!.h.core.db, id), 'card delivered');
    // The post's answer was lost (a crash): the card's row holds no message, so the decision posts
    // the outcome anew and this message still offers its buttons.
    await t.h.core.db.updateTable('deliveries').set({ refs: '[]' }).where('idem_key', '=', `card:${id}`).execute();
    const decided = await t.h.core.decideApproval({ id, decision: 'approve', by: `telegram:${alice.id}` });
    expect(decided.ok).toBe(true);
    await waitForText(t.emu, alice.id, (p) => p === 'stale done', 'reply after the approval');
    expect(card.reply_markup).toBeTruthy();
    const late = t.emu.tap(alice, alice.id, card.message_id, button(card, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === late), 'late tap answer');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === late)?.text).toMatch(/already decided/);
    await waitFor(() => !card.reply_markup, 'the tapped message redrawn', 10_000);
    expect(card.plain).toContain('Approved');
  });

  it('deny with a note: the next message becomes the note; "No note" also works', async () => {
    t = await startTelegramTest();
    const before = runs.danger ?? 0;
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"z.txt"}' }] }, { text: 'ok, I will not' });
    t.emu.sendText(alice, 'touch z.txt');
    const card = await waitForCard(t.emu, alice.id);
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Deny'));
    await waitFor(() => card.plain.includes('Reply with a note for the model'), 'card waiting for a note');
    expect(button(card, 'No note')).toMatch(/^a:.+:x$/);
    t.emu.sendText(alice, 'use the other file instead');
    await waitForText(t.emu, alice.id, (p) => p === 'ok, I will not', 'reply after denial');
    expect((runs.danger ?? 0) - before).toBe(0);
    const row = await approvalRow(t);
    expect(row.status).toBe('rejected');
    expect(row.note).toBe('use the other file instead');
    const toolMsg = t.llm
      .chatRequests()
      .at(-1)
      ?.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.stringify(toolMsg)).toContain('use the other file instead');
    await waitFor(
      () => card.plain.includes('Note: use the other file instead') && !card.reply_markup,
      'card shows the note',
    );

    // Second round: Deny, then "No note".
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"w.txt"}' }] }, { text: 'skipping w' });
    t.emu.sendText(alice, 'touch w.txt');
    const card2 = await waitFor(
      () => texts(t?.emu as never, alice.id).find((m) => m.message_id !== card.message_id && m.reply_markup),
      'second card',
    );
    t.emu.tap(alice, alice.id, card2.message_id, button(card2, 'Deny'));
    await waitFor(
      () => card2.reply_markup?.inline_keyboard?.flat().some((b: { text: string }) => b.text === 'No note'),
      'No note button',
    );
    t.emu.tap(alice, alice.id, card2.message_id, button(card2, 'No note'));
    await waitForText(t.emu, alice.id, (p) => p === 'skipping w', 'reply after no-note denial');
    const rows = await t.h.core.db.selectFrom('approvals').selectAll().orderBy('created_at').execute();
    expect(rows[1]).toMatchObject({ status: 'rejected', note: null });
    expect((runs.danger ?? 0) - before).toBe(0);
  });

  it('keeps buttons working across a restart of the core in this process on the same database; the reply arrives once', async () => {
    t = await startTelegramTest();
    const before = runs.danger ?? 0;
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"r.txt"}' }] }, { text: 'after restart done' });
    t.emu.sendText(alice, 'touch r.txt');
    const card = await waitForCard(t.emu, alice.id);
    await waitFor(
      async () => deliveredCardRefs(t!.h.core.db, (await approvalRow(t as TelegramTest)).id),
      'card delivered',
    );

    await t.restart();
    const cardsBefore = texts(t.emu, alice.id).filter((m) => m.plain.includes('Approval needed')).length;
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, alice.id, (p) => p === 'after restart done', 'reply after restart');
    await waitFor(() => !card.reply_markup, 'card edited by the new process');
    await t.h.core.idle();
    await t.channel().idle();
    expect(texts(t.emu, alice.id).filter((m) => m.plain === 'after restart done')).toHaveLength(1);
    expect(
      texts(t.emu, alice.id).filter((m) => m.plain.includes('Approval needed') || m.plain.includes('Approved')),
    ).toHaveLength(cardsBefore);
    expect(cardsBefore).toBe(1);
    expect((runs.danger ?? 0) - before).toBe(1);
    expect(card.plain).toContain('Approved');
  });

  it('an expired card says so when tapped; foreign or unknown buttons get an alert and change nothing', async () => {
    t = await startTelegramTest({ overrides: { approvals: { timeout_seconds: 1 } } });
    const before = runs.danger ?? 0;
    t.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"e.txt"}' }] }, { text: 'it expired' });
    t.emu.sendText(alice, 'touch e.txt');
    const card = await waitForCard(t.emu, alice.id);
    const approve = button(card, 'Approve');
    await waitFor(() => card.plain.includes('Expired') && !card.reply_markup, 'card shows expiry', 10_000);
    await waitForText(t.emu, alice.id, (p) => p === 'it expired', 'turn continues after expiry');
    const late = t.emu.tap(alice, alice.id, card.message_id, approve);
    const junk = t.emu.tap(alice, alice.id, card.message_id, 'not-ours');
    const ghost = t.emu.tap(alice, alice.id, card.message_id, 'a:no-such-approval:y');
    await waitFor(
      () => [late, junk, ghost].every((id) => t?.emu.callbackAnswers.some((a) => a.callback_query_id === id)),
      'all taps answered',
    );
    const answerOf = (id: string) => t?.emu.callbackAnswers.find((a) => a.callback_query_id === id);
    expect(answerOf(late)).toMatchObject({ show_alert: true, text: '⌛ This request has expired.' });
    expect(answerOf(junk)).toMatchObject({ show_alert: true });
    expect(answerOf(ghost)).toMatchObject({ show_alert: true, text: "❔ I can't find this request any more." });
    expect((await approvalRow(t)).status).toBe('expired');
    expect((runs.danger ?? 0) - before).toBe(0);
  });

  it('questions: one button per suggestion; a tap answers, the card shows the answer', async () => {
    t = await startTelegramTest();
    t.llm.push(
      {
        toolCalls: [
          {
            name: 'ask_user_clarification',
            arguments: '{"question":"Which colour?","suggested_answers":["red","blue"]}',
          },
        ],
      },
      { text: 'blue it is' },
    );
    t.emu.sendText(alice, 'paint it');
    const card = await waitForCard(t.emu, alice.id, 'question card');
    expect(card.plain).toContain('Which colour?');
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'blue'));
    await waitForText(t.emu, alice.id, (p) => p === 'blue it is', 'reply after answer');
    await waitFor(
      () => !card.reply_markup && card.plain.includes('✅ Answered by Alice\nblue'),
      'question card resolved',
    );
  });
});

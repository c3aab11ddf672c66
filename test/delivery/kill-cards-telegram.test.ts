/**
 * Kill tests of approval cards against the Telegram emulator: `switchboard start` as a child
 * process over one database, SIGKILLed while a card is half sent and while its outcome is being
 * drawn, restarted, with taps on buttons from before each restart and Telegram answering 429.
 * However the process dies, every message showing a decided card ends without buttons and says
 * who decided; the tool runs once and its answer is shown once, whole.
 * A start also brings a card that still offers buttons for a decided approval to its outcome.
 */
import { describe, expect, it } from 'vitest';
import type { SentMessage } from '../emulators/telegram.js';
import { killBudget, telegram, telegramAlice as alice, useKillWorld, waitFor } from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';

const world = useKillWorld(telegram, { prefix: 'sb-kill-cards', toml: '[telegram]\nstream_interval_ms = 100\n' });

/**
 * The retry_after of the 429s on a redraw. The Bot API sends whole seconds; a fraction takes the
 * same paths (two waited out in the transport, the third the presenter's) with shorter waits.
 */
const REDRAW_RETRY_AFTER = 0.2;

/** Messages of Alice's chat that show an approval card (asking, or its outcome). */
const cards = (): SentMessage[] =>
  world()
    .emu.messages(alice.id)
    .filter((m) => [m.plain, ...m.history].some((t) => /Approval needed|Approved|Denied/.test(t)));

const buttonsOf = (m: SentMessage): Array<{ text: string; callback_data: string }> =>
  (m.reply_markup?.inline_keyboard ?? []).flat();

/** The Approve button's payload of a card message (as it was when read). */
function approveData(m: SentMessage): string {
  const button = buttonsOf(m).find((b) => b.text.includes('Approve'));
  if (!button) throw new Error(`message ${m.message_id} shows no Approve button`);
  return button.callback_data;
}

/**
 * As a person would: Approve on every card that shows buttons and was not tapped yet (a tool call
 * the crash cut short is run again only after a new approval: its card asks again).
 */
function approveOpenCards(tapped: Set<number>): void {
  for (const m of cards()) {
    if (tapped.has(m.message_id) || buttonsOf(m).length === 0) continue;
    tapped.add(m.message_id);
    world().emu.tap(alice, alice.id, m.message_id, approveData(m));
  }
}

/** Replies that look like an answer: complete ones and any fragment left beside them. */
const answerish = () =>
  world()
    .emu.messages(alice.id)
    .filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'))
    .map((m) => m.plain);

/** The most tool results the model was given in one request (a re-sent round repeats the same ones). */
const toolResults = () =>
  Math.max(
    0,
    ...world()
      .llm.chatRequests()
      .map((r) => (r.body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length),
  );

describe('telegram: a decided card settles every message that shows it, whatever dies when', () => {
  // Three starts; waits: the posted card, the card sent again, the held redraw, the answer, every
  // copy settled, the ledger empty.
  it('a card sent twice across a crash, decided on the copy the ledger lost, killed while drawing the outcome, 429s: no copy keeps buttons', {
    timeout: killBudget(3, 6),
  }, async () => {
    const { emu, db, start, openRows } = world();
    const first = await start();
    // Telegram takes the card; the process dies before it learns the message id.
    const posted = emu.hold('sendMessage', { match: (p) => p.reply_markup !== undefined, phase: 'after' });
    emu.sendText(alice, 'approve it');
    await posted.arrived;
    await first.kill();

    // The restart cannot look the card up on Telegram: it is sent again.
    const second = await start();
    await waitFor(() => cards().filter((m) => buttonsOf(m).length > 0).length === 2, 'the card sent again');
    const [lost, kept] = cards() as [SentMessage, SentMessage];
    const keptApprove = approveData(kept);

    // Alice approves on the copy the ledger never recorded; the process dies while the outcome
    // is on its way to Telegram.
    const drawing = emu.hold('editMessageText', { match: (p) => Number(p.chat_id) === alice.id });
    emu.tap(alice, alice.id, lost.message_id, approveData(lost));
    await drawing.arrived;
    const approval = await db.selectFrom('approvals').select(['status', 'decided_by']).executeTakeFirstOrThrow();
    expect(approval).toEqual({ status: 'approved', decided_by: `telegram:${alice.id}` });
    await second.kill();

    // Telegram is rate limiting when the next process starts; Alice taps Approve on the other
    // copy, a button from before the restart, for a card decided already.
    emu.fail('editMessageText', 3, { status: 429, retryAfter: REDRAW_RETRY_AFTER });
    await start();
    emu.tap(alice, alice.id, kept.message_id, keptApprove);

    const tapped = new Set([lost.message_id, kept.message_id]);
    await waitFor(() => {
      approveOpenCards(tapped);
      return answerish().includes(answerFor('approve it'));
    }, 'the answer after the approval');
    await waitFor(
      () => cards().every((m) => buttonsOf(m).length === 0 && /Approved .*by Alice/.test(m.plain)),
      'every copy of the card settled, naming who decided',
    );
    await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty');
    expect(answerish()).toEqual([answerFor('approve it')]);
    expect(toolResults()).toBe(1);
    expect(emu.calls.some((c) => c.method === 'editMessageText' && !c.ok)).toBe(true);
  });

  // Two starts; waits: the card, the held redraw, the answer, every card settled, the ledger empty.
  it('killed between the decision and the redraw, then 429s on the redraw: the card shows the outcome once the restart is through', {
    timeout: killBudget(2, 5),
  }, async () => {
    const { emu, start, openRows } = world();
    const first = await start();
    emu.sendText(alice, 'approve this');
    await waitFor(() => cards().some((m) => buttonsOf(m).length > 0), 'the card');
    const [card] = cards() as [SentMessage];
    const approve = approveData(card);

    // The decision is committed; the edit that shows it never reaches Telegram.
    const drawing = emu.hold('editMessageText', { match: (p) => Number(p.message_id) === card.message_id });
    emu.tap(alice, alice.id, card.message_id, approve);
    await drawing.arrived;
    await first.kill();

    emu.fail('editMessageText', 3, { status: 429, retryAfter: REDRAW_RETRY_AFTER });
    await start();
    // The same button again, from before the restart.
    emu.tap(alice, alice.id, card.message_id, approve);
    const tapped = new Set([card.message_id]);
    await waitFor(() => {
      approveOpenCards(tapped);
      return answerish().includes(answerFor('approve this'));
    }, 'the answer after the approval');
    await waitFor(
      () => cards().every((m) => buttonsOf(m).length === 0 && /Approved .*by Alice/.test(m.plain)),
      'every card settled, naming who decided',
    );
    await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty');
    expect(answerish()).toEqual([answerFor('approve this')]);
    expect(toolResults()).toBe(1);
  });

  // Two starts; waits: the card, the card recorded as shown, the card brought to its outcome.
  it('a start brings a card still offering buttons for a decided approval to its outcome, naming who decided', {
    timeout: killBudget(2, 3),
  }, async () => {
    const { emu, db, start, openRows } = world();
    const first = await start();
    emu.sendText(alice, 'approve that');
    await waitFor(() => cards().some((m) => buttonsOf(m).length > 0), 'the card');
    const [card] = cards() as [SentMessage];
    await waitFor(async () => (await openRows()) === 0, 'the card recorded as shown');
    await first.kill();

    // A database where the approval was denied while its card row still shows it asking (as an
    // older version, or a crash between two writes, could leave it).
    await db
      .updateTable('approvals')
      .set({ status: 'rejected', decided_by: `telegram:${alice.id}`, decided_at: Date.now() })
      .execute();
    const edits = emu.calls.filter((c) => c.method === 'editMessageText').length;

    await start();
    await waitFor(
      () => buttonsOf(card).length === 0 && /Denied .*by Alice/.test(card.plain),
      'the card brought to its outcome',
    );
    const edit = emu.calls
      .filter((c) => c.method === 'editMessageText')
      .slice(edits)
      .find((c) => Number(c.params.message_id) === card.message_id);
    expect(edit?.ok).toBe(true);
    expect(cards()).toHaveLength(1);
  });
});

/**
 * Kill tests against the Telegram emulator: `switchboard start` runs as a child process and is
 * SIGKILLed at the awkward moments of delivery, then started again over the same database.
 * After the restart every answer is in the chat exactly once, in order, with no fragment beside it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  killBudget,
  heldSlowAnswer,
  telegram,
  telegramAlice as alice,
  useKillWorld,
  waitFor,
} from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';

const world = useKillWorld(telegram, { prefix: 'sb-kill-tg', toml: '[telegram]\nstream_interval_ms = 100\n' });

const answers = () =>
  world()
    .emu.messages(alice.id)
    .filter((m) => m.kind === 'text' && m.plain.startsWith('Answer to'))
    .map((m) => m.plain);

/** The stored final reply row of a question, once the model's answer is in the database. */
async function storedReply(question: string) {
  const { db } = world();
  const rows = await db.selectFrom('deliveries').selectAll().where('kind', '=', 'reply').execute();
  return rows.find(
    (r) => r.content?.includes(answerFor(question).slice(0, 40)) && !r.content.includes('"partial":true'),
  );
}

// Answers as rich messages (the default) and as HTML: the same guarantees either way.
for (const rich of ['auto', 'off'] as const) {
  describe(`telegram: SIGKILL at the awkward moments of delivery (rich_messages = ${rich})`, () => {
    /** The method that posts an answer. */
    const postAnswer = rich === 'off' ? 'sendMessage' : 'sendRichMessage';
    beforeEach(() => {
      world().env.SWITCHBOARD__TELEGRAM__RICH_MESSAGES = rich;
    });

    // Three starts; waits: the first answer, the held post, the answer stored, the held post
    // again, the stored answer after the restart, and the final judgement (2).
    it('after the answer is stored and before it is sent, and again during recovery: shown once, in order', {
      timeout: killBudget(3, 7),
    }, async () => {
      const { emu, start, expectExactly } = world();
      const first = await start();
      emu.sendText(alice, 'q1');
      await waitFor(() => answers().includes(answerFor('q1')), 'the first answer');

      // The answer to q2 is stored while Telegram never sees a message for it.
      const held = emu.hold(postAnswer, { match: (p) => Number(p.chat_id) === alice.id });
      emu.sendText(alice, 'q2');
      await held.arrived;
      await waitFor(() => storedReply('q2'), 'the answer stored');
      await first.kill();

      // Recovery itself is killed while it sends the stored answer.
      const again = emu.hold(postAnswer, { match: (p) => Number(p.chat_id) === alice.id });
      const second = await start();
      await again.arrived;
      await second.kill();

      await start();
      await waitFor(() => answers().includes(answerFor('q2')), 'the stored answer after the restart');
      emu.sendText(alice, 'q3');
      await expectExactly(answers, [answerFor('q1'), answerFor('q2'), answerFor('q3')]);
    });

    // Two starts; waits: the first words, the draft growing, and the final judgement (2).
    it('mid-draft: nothing is left in the chat, and the restarted answer is posted once, complete', {
      timeout: killBudget(2, 4),
    }, async () => {
      const { emu, llm, db, start, expectExactly } = world();
      const slow = heldSlowAnswer();
      llm.setHandler(slow.model);
      const first = await start();
      emu.sendText(alice, 'slow q');
      // The first words show as a draft (private chat, the default streaming); the chat has no message.
      await waitFor(() => emu.draft(alice.id)?.plain.startsWith('Answ'), 'the first words as a draft');
      slow.resume();
      await waitFor(() => (emu.draft(alice.id)?.plain.length ?? 0) > 12, 'the draft growing');
      expect(emu.messages(alice.id)).toEqual([]);
      expect(await db.selectFrom('deliveries').select('id').where('kind', '=', 'reply').execute()).toEqual([]);
      await first.kill();

      await start();
      await expectExactly(answers, [answerFor('slow q')]);
      // No fragment: the one message of the chat is the whole answer, posted once and never edited.
      const shown = emu.messages(alice.id).filter((m) => m.kind === 'text');
      expect(shown.map((m) => m.plain)).toEqual([answerFor('slow q')]);
      expect(shown[0]?.history).toHaveLength(1);
      expect(emu.calls.filter((c) => c.method === 'editMessageText')).toEqual([]);
    });

    // Two starts; waits: the first words, the held edit, the stream recorded, and the final
    // judgement (2).
    it('during a streamed edit (telegram.streaming = "edit"): the restarted answer finishes the message already shown', {
      timeout: killBudget(2, 5),
    }, async () => {
      const { emu, llm, env, start, streamRecorded, expectExactly } = world();
      env.SWITCHBOARD__TELEGRAM__STREAMING = 'edit';
      const slow = heldSlowAnswer();
      llm.setHandler(slow.model);
      const first = await start();
      const held = emu.hold('editMessageText', { match: (p) => Number(p.chat_id) === alice.id });
      emu.sendText(alice, 'slow q');
      // The first words are posted; then the answer goes on, and the message is being edited.
      const fragment = await waitFor(
        () => emu.messages(alice.id).find((m) => m.kind === 'text' && m.plain.startsWith('Answ')),
        'the first words posted',
      );
      slow.resume();
      await held.arrived;
      await streamRecorded(fragment?.message_id);
      await first.kill();

      await start();
      await expectExactly(answers, [answerFor('slow q')]);
      const shown = emu.messages(alice.id).filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'));
      expect(shown.map((m) => m.message_id)).toEqual([fragment?.message_id]);
    });

    // Two starts; waits: the held card, the card resent, the final judgement (2), the outcome shown.
    it('between Telegram accepting a card and the ledger recording it: resent once, and every copy resolves', {
      timeout: killBudget(2, 5),
    }, async () => {
      const { emu, start, expectExactly } = world();
      const first = await start();
      // Telegram takes the card; the process dies before it learns the message id.
      const held = emu.hold('sendMessage', { match: (p) => p.reply_markup !== undefined, phase: 'after' });
      emu.sendText(alice, 'approve it');
      await held.arrived;
      await first.kill();

      await start();
      const cards = () =>
        emu.messages(alice.id).filter((m) => m.plain.includes('Approval needed') || m.plain.includes('Approved'));
      await waitFor(() => cards().length === 2, 'the card resent after the restart');
      // Telegram has no way to look a message up: the ambiguous card is sent again (the window is
      // one database write between Telegram's answer and the ledger). Both copies carry the same
      // approval id, so tapping the older one works too.
      const older = cards()[0]!;
      const approve = (older.reply_markup?.inline_keyboard ?? [])
        .flat()
        .find((b: { text: string }) => b.text.includes('Approve'));
      emu.tap(alice, alice.id, older.message_id, approve.callback_data);
      await expectExactly(answers, [answerFor('approve it')]);
      await waitFor(
        () => emu.messages(alice.id).filter((m) => m.plain.includes('Approved')).length >= 1,
        'a card shows the outcome',
      );
    });
  });
}

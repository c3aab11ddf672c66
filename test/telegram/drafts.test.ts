/**
 * Telegram message drafts against the emulator: the native Stop button stops the turn and keeps
 * the text so far as the final message, marked stopped; a tool's run shows "Thinking…"; a server
 * without drafts is detected once and the channel streams by edits; groups keep edits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { latch } from '../helpers/test-tools.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const never = new Promise<void>(() => undefined);

describe('telegram: drafts', () => {
  it('Stop on the draft stops the turn; the text so far is kept as the final message, marked stopped', async () => {
    t = await startTelegramTest();
    // The answer stops after its first words and would never go on by itself.
    t.llm.push({
      text: 'The first words of a long answer',
      chunkSize: 4,
      delayMs: 20,
      pauses: [{ afterChars: 16, until: never }],
    });
    t.emu.sendText(alice, 'tell me');
    // All the words before the pause, so that what Stop keeps does not depend on how far the draft had got.
    await waitFor(() => t?.emu.draft(alice.id)?.plain.startsWith('The first words'), 'the first words as a draft');
    expect(texts(t.emu, alice.id)).toEqual([]);
    t.emu.pressStop(alice.id);
    const kept = await waitForText(t.emu, alice.id, (p) => p.includes('(stopped)'), 'the stopped answer');
    expect(kept.plain).toMatch(/^The first words\s+\(stopped\)$/);
    await t.h.core.idle();
    // Stopped as by /stop: the turn is cancelled, nothing else is said, the draft is gone.
    const turn = await t.h.core.db.selectFrom('turns').select('status').executeTakeFirstOrThrow();
    expect(turn.status).toBe('cancelled');
    expect(texts(t.emu, alice.id)).toHaveLength(1);
    expect(t.emu.draft(alice.id)).toBeUndefined();
    const replies = await t.h.core.db.selectFrom('deliveries').selectAll().where('kind', '=', 'reply').execute();
    expect(replies.map((r) => r.status)).toEqual(['delivered']);
    // The next message is answered as usual.
    t.llm.push({ text: 'Next answer.' });
    t.emu.sendText(alice, 'again');
    await waitForText(t.emu, alice.id, (p) => p === 'Next answer.', 'the next answer');
  });

  it('asks for stopped_message_generation (polling and webhook)', async () => {
    t = await startTelegramTest({ webhook: true });
    const hook = t.emu.calls.find((c) => c.method === 'setWebhook');
    expect(hook?.params.allowed_updates).toContain('stopped_message_generation');
    await t.close();
    t = await startTelegramTest();
    t.llm.push({ text: 'Polled.' });
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'Polled.', 'an answer by polling');
    const poll = t.emu.calls.find((c) => c.method === 'getUpdates');
    expect(poll?.params.allowed_updates).toContain('stopped_message_generation');
  });

  it('shows "Thinking…" while a tool runs, after the round\'s text', async () => {
    latch.reset();
    t = await startTelegramTest();
    t.llm.push({ toolCalls: [{ name: 'hold', arguments: '{}' }], text: 'Let me check.' });
    t.llm.push({ text: 'Done checking.' });
    t.emu.sendText(alice, 'check');
    const first = await waitForText(t.emu, alice.id, (p) => p === 'Let me check.', "the first round's text");
    // While the tool runs, the chat shows the placeholder again (the message dropped the old draft).
    await waitFor(() => t?.emu.draft(alice.id)?.plain === '', 'the placeholder while the tool runs');
    const sentAt = t.emu.calls.find((c) => c.method === 'sendMessage' && c.params.text === first.text)?.at ?? 0;
    const placeholders = t.emu.calls.filter((c) => c.method === 'sendMessageDraft' && !c.params.text);
    expect(placeholders.at(-1)?.at).toBeGreaterThanOrEqual(sentAt);
    latch.open();
    await waitForText(t.emu, alice.id, (p) => p === 'Done checking.', 'the answer');
    await t.h.core.idle();
    expect(t.emu.draft(alice.id)).toBeUndefined();
  });

  it('a server that does not know drafts: detected once, then edits for the rest of the run', async () => {
    // A server lagging behind knows neither kind of draft (its rich messages are another test's).
    t = await startTelegramTest({
      beforeStart: (emu) => {
        emu.forget('sendMessageDraft');
        emu.forget('sendRichMessageDraft');
      },
    });
    const reply = 'This answer streams in pieces while the server knows nothing of drafts at all.';
    t.llm.push({ text: reply, chunkSize: 6, delayMs: 80 });
    t.emu.sendText(alice, 'hi');
    const msg = await waitForText(t.emu, alice.id, (p) => p === reply, 'the answer');
    expect(msg.history.length).toBeGreaterThan(1);
    t.llm.push({ text: 'Second answer, also streamed by edits now.', chunkSize: 6, delayMs: 80 });
    t.emu.sendText(alice, 'more');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('Second answer'), 'the second answer');
    await t.h.core.idle();
    expect(t.emu.calls.filter((c) => c.method === 'sendMessageDraft')).toHaveLength(1);
    expect(t.channel().surface.drafts.refused).toMatch(/^404 /);
    expect(texts(t.emu, alice.id)).toHaveLength(2);
  });

  it('groups keep edit-based streaming: no draft is ever sent there', async () => {
    t = await startTelegramTest();
    const group = { chatId: -100555, chatType: 'supergroup' as const };
    const reply = 'A group answer that streams in small pieces so the message is edited.';
    t.llm.push({ text: reply, chunkSize: 6, delayMs: 100 });
    t.emu.sendText(alice, '@switchboard_test_bot hi', {
      ...group,
      entities: [{ type: 'mention', offset: 0, length: 21 }],
    });
    const msg = await waitForText(t.emu, group.chatId, (p) => p === reply, 'the group answer');
    expect(msg.history.length).toBeGreaterThan(1);
    expect(t.emu.calls.filter((c) => c.method === 'sendMessageDraft')).toEqual([]);
  });
});

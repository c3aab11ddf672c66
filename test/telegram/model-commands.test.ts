/** `/usage` and `/compact` from the command table, over the Telegram emulator. */
import { afterEach, describe, it } from 'vitest';
import { SUMMARY_PROMPT } from '../../src/core/compaction.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe('telegram: model commands', () => {
  it('/usage shows the tokens of today and this month; /compact summarises the earlier turns and says so', async () => {
    t = await startTelegramTest();
    t.llm.setHandler((body) =>
      body.messages[0]?.content === SUMMARY_PROMPT
        ? { text: 'The user greeted twice.', usage: { prompt: 50, completion: 7 } }
        : { text: 'hello there', usage: { prompt: 100, completion: 20 } },
    );
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'hello there', 'first reply');
    t.emu.sendText(alice, 'hi again');
    await waitFor(() => texts(t!.emu, alice.id).filter((m) => m.plain === 'hello there').length === 2, 'second reply');
    await t.h.core.idle();
    t.emu.sendText(alice, '/usage');
    await waitForText(
      t.emu,
      alice.id,
      (p) => p.startsWith('Today (UTC): 240 tokens (200 prompt, 40 completion)'),
      '/usage reply',
    );
    t.emu.sendText(alice, '/compact');
    await waitForText(
      t.emu,
      alice.id,
      (p) => p === 'Summarised 1 earlier turn; the model sees the summary from now on.',
      '/compact reply',
    );
    await waitForText(t.emu, alice.id, (p) => p.endsWith('Earlier messages summarised'), 'the notice');
    t.emu.sendText(alice, '/usage');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('Today (UTC): 297 tokens'), '/usage counts the summary');
  });
});

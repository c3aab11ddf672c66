/**
 * The command menu is optional: a Bot API that lacks `setMyCommands` (404) or fails it (500)
 * does not stop the bot from starting; it answers messages, and the menu is tried again later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alice, startTelegramTest, type TelegramTest, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const menuCalls = (t: TelegramTest) => t.emu.calls.filter((c) => c.method === 'setMyCommands');

describe('telegram: the command menu', () => {
  it('a Bot API answering 404 to setMyCommands: the bot starts, answers, and registers the menu on a later try', async () => {
    t = await startTelegramTest({
      beforeStart: (emu) => emu.fail('setMyCommands', 3, { status: 404, description: 'Not Found' }),
      channelOptions: { commandMenuRetryMs: 200 },
    });
    t.llm.push({ text: 'Still here.' });
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'Still here.', 'the reply');
    expect(t.channel().health()).toBeNull();
    // Tried again after the failures, with a growing pause, until Telegram took it.
    await waitFor(() => t?.emu.commands.length, 'the menu registered on a later try', 30_000);
    expect(menuCalls(t).filter((c) => !c.ok).length).toBe(3);
    expect(menuCalls(t).filter((c) => c.ok)).toHaveLength(1);
  });

  it('a Bot API failing setMyCommands for a moment (500): the bot answers while the menu waits out its back-off', async () => {
    t = await startTelegramTest({
      beforeStart: (emu) => emu.fail('setMyCommands', 1, { status: 500, description: 'Internal Server Error' }),
    });
    t.llm.push({ text: 'Not held up.' });
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'Not held up.', 'the reply');
    // The retry layer backs off seconds after a 500: the reply did not wait for it.
    expect(t.emu.commands).toEqual([]);
    await waitFor(() => t?.emu.commands.length, 'the menu registered after the back-off', 30_000);
  });

  it('a Bot API that never has setMyCommands: the bot keeps serving, and stop ends the retries', async () => {
    t = await startTelegramTest({
      beforeStart: (emu) => emu.fail('setMyCommands', 1000, { status: 404, description: 'Not Found' }),
      channelOptions: { commandMenuRetryMs: 100 },
    });
    t.llm.push({ text: 'Fine without a menu.' });
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'Fine without a menu.', 'the reply');
    await waitFor(() => menuCalls(t as TelegramTest).length >= 2, 'a second try');
    await t.h.close();
    const after = menuCalls(t).length;
    await new Promise((r) => setTimeout(r, 500));
    expect(menuCalls(t).length).toBe(after);
    expect(t.emu.commands).toEqual([]);
  });
});

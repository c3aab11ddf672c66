import { afterEach, describe, expect, it } from 'vitest';
import { alice, startTelegramTest, type TelegramTest, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe('telegram: webhook mode', () => {
  it('sets the webhook with its secret and handles updates Telegram posts', async () => {
    t = await startTelegramTest({ webhook: true });
    expect(t.emu.webhook).toEqual({ url: `${t.httpUrl}/telegram/webhook`, secret: 'right-secret' });
    expect(t.emu.calls.some((c) => c.method === 'getUpdates')).toBe(false);
    t.llm.push({ text: 'hello over webhook' });
    t.emu.sendText(alice, 'hi');
    await waitForText(t.emu, alice.id, (p) => p === 'hello over webhook', 'webhook reply');
    expect(t.channel().health()).toBeNull();
  });

  it('refuses a wrong or missing secret with 401 and handles nothing', async () => {
    t = await startTelegramTest({ webhook: true });
    const update = {
      update_id: 1,
      message: { message_id: 1, date: 0, chat: { id: alice.id, type: 'private' }, from: { id: alice.id, is_bot: false, first_name: 'Alice' }, text: 'forged' },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${t?.httpUrl}/telegram/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(update) });
    expect((await post({ 'x-telegram-bot-api-secret-token': 'wrong-secret' })).status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect((await fetch(`${t.httpUrl}/telegram/webhook`)).status).toBe(405);
    // A malformed body with the right secret is a 400, not a crash.
    const bad = await fetch(`${t.httpUrl}/telegram/webhook`, {
      method: 'POST',
      headers: { 'x-telegram-bot-api-secret-token': 'right-secret' },
      body: 'not json',
    });
    expect(bad.status).toBe(400);
    await t.h.core.idle();
    expect(t.llm.chatRequests()).toHaveLength(0);
    expect(await t.h.core.db.selectFrom('inbox').selectAll().execute()).toHaveLength(0);

    // The same update with the right secret goes through.
    t.llm.push({ text: 'accepted' });
    expect((await post({ 'x-telegram-bot-api-secret-token': 'right-secret' })).status).toBe(200);
    await waitForText(t.emu, alice.id, (p) => p === 'accepted', 'reply to the genuine update');
    // Redelivery of the same update id is handled once.
    expect((await post({ 'x-telegram-bot-api-secret-token': 'right-secret' })).status).toBe(200);
    await t.h.core.idle();
    expect(t.llm.chatRequests()).toHaveLength(1);
  });
});

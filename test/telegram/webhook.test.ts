import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { TelegramChannel } from '../../src/channels/telegram/index.js';
import { configSchema } from '../../src/config.js';
import { HttpServer } from '../../src/http/server.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
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
      message: {
        message_id: 1,
        date: 0,
        chat: { id: alice.id, type: 'private' },
        from: { id: alice.id, is_bot: false, first_name: 'Alice' },
        text: 'forged',
      },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${t?.httpUrl}/telegram/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(update),
      });
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

describe('telegram: webhook during start-up', () => {
  it('holds an update posted while the channel starts and handles it once it runs', async () => {
    t = await startTelegramTest({ webhook: true });
    const test = t;
    // The next start waits on setWebhook's answer: the route is there, the channel does not run yet.
    const setWebhook = test.emu.hold('setWebhook', { phase: 'after' });
    const restarting = test.restart();
    await setWebhook.arrived;
    test.llm.push({ text: 'held, then answered' });
    const update = {
      update_id: 9001,
      message: {
        message_id: 7,
        date: 0,
        chat: { id: alice.id, type: 'private' },
        from: { id: alice.id, is_bot: false, first_name: 'Alice' },
        text: 'early',
      },
    };
    let status: number | undefined;
    const posted = fetch(`${test.httpUrl}/telegram/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'right-secret' },
      body: JSON.stringify(update),
    }).then((r) => (status = r.status));
    await new Promise((r) => setTimeout(r, 300));
    expect(status).toBeUndefined();
    setWebhook.release();
    await restarting;
    expect(await posted).toBe(200);
    await waitForText(test.emu, alice.id, (p) => p === 'held, then answered', 'the reply to the held update');
  });
});

describe('telegram: configuration errors', () => {
  it('refuses a webhook secret Telegram would reject, naming the key', () => {
    const log = pino({ level: 'silent' });
    const http = new HttpServer(log);
    const config = configSchema.parse({
      telegram: { bot_token: '1:x', webhook_url: 'https://bot.example.com/hook', webhook_secret: 'has spaces!' },
    });
    const paths = new PathPolicy({ root: '.' });
    expect(() => new TelegramChannel({ config, http, log, paths })).toThrow(/telegram\.webhook_secret.*A-Z/);
    const noToken = configSchema.parse({});
    expect(() => new TelegramChannel({ config: noToken, http, log, paths })).toThrow(/TELEGRAM_BOT_TOKEN/);
  });
});

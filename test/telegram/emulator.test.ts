import { Api, GrammyError } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { checkTelegramHtml } from '../emulators/telegram-html.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';

let emu: TelegramEmulator | null = null;
afterEach(async () => {
  await emu?.close();
  emu = null;
});

const user = { id: 5, first_name: 'U' };

describe('Bot API emulator', () => {
  it('ephemeral messages: groups only, to a member, with a tap of theirs; recorded with who sees them; refused or dropped on demand', async () => {
    emu = await startTelegramEmulator();
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    const other = { id: 6, first_name: 'O' };
    const to = (receiver_user_id: number, callback_query_id?: string) => ({
      ephemeral_message_parameters: { receiver_user_id, ...(callback_query_id ? { callback_query_id } : {}) },
    });
    await expect(api.sendMessage(5, 'x', to(5))).rejects.toThrow(/only to group chats/);
    await expect(api.sendMessage(-100, 'x', to(5))).rejects.toThrow(/not a member/);
    emu.sendText(user, 'hi', { chatId: -100 });
    const card = await api.sendMessage(-100, 'card');
    const tapByOther = emu.tap(other, -100, card.message_id, 'x');
    await expect(api.sendMessage(-100, 'x', to(5, tapByOther))).rejects.toThrow(/callback query not found/);
    await expect(api.sendMessage(-100, '<b>open', { ...to(5), parse_mode: 'HTML' })).rejects.toThrow(/can't parse/);
    const tapByUser = emu.tap(user, -100, card.message_id, 'x');
    const sent = await api.sendMessage(-100, '<b>only you</b>', { ...to(5, tapByUser), parse_mode: 'HTML' });
    expect(sent).toMatchObject({ message_id: 0, receiver_user: { id: 5 }, ephemeral_message_id: 1 });
    expect(emu.ephemerals(-100)).toEqual([
      expect.objectContaining({ receiver_user_id: 5, callback_query_id: tapByUser, plain: 'only you' }),
    ]);
    // Not a message of the chat: nobody else sees it.
    expect(emu.messages(-100).map((m) => m.plain)).toEqual(['card']);
    emu.join(-100, { id: 7 });
    await api.sendMessage(-100, 'for seven', to(7));
    emu.ephemeralSupport('refuse');
    await expect(api.sendMessage(-100, 'x', to(5))).rejects.toThrow(/ephemeral messages are not supported/);
    emu.ephemeralSupport('ignore');
    const dropped = await api.sendMessage(-100, 'to everyone', to(5));
    expect(dropped.message_id).toBeGreaterThan(0);
    expect(dropped.receiver_user).toBeUndefined();
    expect(emu.messages(-100).map((m) => m.plain)).toEqual(['card', 'to everyone']);
    expect(emu.ephemerals(-100).map((e) => e.receiver_user_id)).toEqual([5, 7]);
  });

  it('drafts: private chats only, non-zero id, 4096 characters, gone on a message or expiry; Stop delivers an update if asked for', async () => {
    emu = await startTelegramEmulator({ draftTtlMs: 300 });
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    await expect(api.sendMessageDraft(-100, 1, 'x')).rejects.toThrow(/private chats only/);
    await expect(api.sendMessageDraft(5, 0, 'x')).rejects.toThrow(/draft_id must be non-zero/);
    await expect(api.sendMessageDraft(5, 1, 'y'.repeat(4097))).rejects.toThrow(/message is too long/);
    await expect(api.sendMessageDraft(5, 1, '<b>open', { parse_mode: 'HTML' })).rejects.toThrow(/can't parse entities/);
    // Empty text: the "Thinking…" placeholder.
    expect(await api.sendMessageDraft(5, 7, '')).toBe(true);
    expect(emu.draft(5)).toMatchObject({ draft_id: 7, plain: '', can_stop: false });
    await api.sendMessageDraft(5, 7, '<b>partial</b>', { parse_mode: 'HTML', can_stop: true });
    expect(emu.draft(5)?.plain).toBe('partial');
    await api.sendMessage(5, 'final');
    expect(emu.draft(5)).toBeUndefined();
    await api.sendMessageDraft(5, 7, 'again');
    await new Promise((r) => setTimeout(r, 350));
    expect(emu.draft(5)).toBeUndefined();
    expect(emu.drafts(5).map((d) => d.plain)).toEqual(['', 'partial', 'again']);
    expect(() => emu?.pressStop(5)).toThrow(/no draft with a Stop button/);
    // A bot that did not ask for stopped_message_generation never gets it.
    await api.getUpdates({ allowed_updates: ['message'] });
    await api.sendMessageDraft(5, 8, 'stoppable', { can_stop: true });
    emu.pressStop(5);
    expect(emu.draft(5)).toBeUndefined();
    expect(await api.getUpdates({ allowed_updates: ['message', 'stopped_message_generation'] })).toEqual([]);
    await api.sendMessageDraft(5, 9, 'stoppable', { can_stop: true });
    const id = emu.pressStop(5);
    expect(await api.getUpdates({})).toEqual([
      {
        update_id: id,
        stopped_message_generation: { chat: { id: 5, type: 'private', first_name: 'User' }, draft_id: 9 },
      },
    ]);
    emu.forget('sendMessageDraft');
    await expect(api.sendMessageDraft(5, 9, 'x')).rejects.toMatchObject({ error_code: 404 });
  });

  it('long polling honours limit and offset, and waits up to timeout for new updates', async () => {
    emu = await startTelegramEmulator();
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    const a = emu.sendText(user, 'a');
    const b = emu.sendText(user, 'b');
    expect((await api.getUpdates({ limit: 1 })).map((u) => u.update_id)).toEqual([a]);
    expect((await api.getUpdates({ offset: a + 1 })).map((u) => u.update_id)).toEqual([b]);
    expect(emu.pendingUpdates().map((u) => u.update_id)).toEqual([b]);
    const waiting = api.getUpdates({ offset: b + 1, timeout: 20 });
    const c = emu.sendText(user, 'c');
    expect((await waiting).map((u) => u.update_id)).toEqual([c]);
  });

  it('rejects bad HTML the way Telegram does and accepts valid entities', async () => {
    emu = await startTelegramEmulator();
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    await expect(api.sendMessage(1, '<b>open', { parse_mode: 'HTML' })).rejects.toThrow(
      /can't parse entities: Can't find end tag/,
    );
    await expect(api.sendMessage(1, '<foo>x</foo>', { parse_mode: 'HTML' })).rejects.toThrow(
      /Unsupported start tag "foo"/,
    );
    await expect(api.sendMessage(1, '<b><i>x</b></i>', { parse_mode: 'HTML' })).rejects.toThrow(/Unmatched end tag/);
    await expect(api.sendMessage(1, 'a & b', { parse_mode: 'HTML' })).rejects.toThrow(/can't parse entities/);
    const ok = await api.sendMessage(1, '<b>x</b> &lt;y&gt; <a href="https://e.com/?a=1&amp;b=2">l</a>', {
      parse_mode: 'HTML',
    });
    expect(ok.text).toBe('x <y> l');
    expect(emu.messages(1)).toHaveLength(1);
    expect(checkTelegramHtml('<pre><code class="language-ts">a</code></pre>').ok).toBe(true);
    expect(checkTelegramHtml('<pre><b>a</b></pre>').ok).toBe(false);
  });

  it('edits: "message is not modified" for identical content; 429 carries retry_after', async () => {
    emu = await startTelegramEmulator();
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    const m = await api.sendMessage(1, 'same');
    await expect(api.editMessageText(1, m.message_id, 'same')).rejects.toThrow(/message is not modified/);
    await api.editMessageText(1, m.message_id, 'changed');
    expect(emu.messages(1)[0]?.history).toEqual(['same', 'changed']);
    emu.fail('sendMessage', 1, { status: 429, retryAfter: 7 });
    const err = await api.sendMessage(1, 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GrammyError);
    expect((err as GrammyError).error_code).toBe(429);
    expect((err as GrammyError).parameters.retry_after).toBe(7);
    expect(emu.messages(1)).toHaveLength(1);
  });

  it('serves uploaded files through getFile and refuses files over 20 MB', async () => {
    emu = await startTelegramEmulator();
    const api = new Api(emu.token, { apiRoot: emu.apiRoot });
    const id = emu.addFile(Buffer.from('hello'));
    const file = await api.getFile(id);
    const res = await fetch(`${emu.apiRoot}/file/bot${emu.token}/${file.file_path}`);
    expect(await res.text()).toBe('hello');
    const big = emu.addFile(Buffer.from('x'), 21 * 1024 * 1024);
    await expect(api.getFile(big)).rejects.toThrow(/file is too big/);
    expect((await fetch(`${emu.apiRoot}/file/botWRONG/${file.file_path}`)).status).toBe(404);
  });
});

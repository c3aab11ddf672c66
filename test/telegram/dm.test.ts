import { Api } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { TYPING_DELAY_MS } from '../../src/delivery/typing.js';
import { getSetting } from '../../src/store/repos/conversations.js';
import {
  alice,
  bob,
  button,
  startTelegramTest,
  stranger,
  type TelegramTest,
  texts,
  waitFor,
  waitForText,
} from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const userTexts = (t: TelegramTest) =>
  t.llm.chatRequests().map((r) =>
    (r.body.messages as Array<{ role: string; content: string }>)
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .at(-1),
  );

describe('telegram: private chats', () => {
  it('streams a reply as drafts ("Thinking…" first), then posts it once as one message', async () => {
    t = await startTelegramTest();
    const reply = 'Hello **world**, this reply streams in small pieces so you can watch it grow.';
    let firstToken: () => void = () => undefined;
    const slowStart = new Promise<void>((r) => {
      firstToken = r;
    });
    t.llm.push({ text: reply, chunkSize: 6, delayMs: 120, pauses: [{ afterChars: 0, until: slowStart }] });
    t.emu.sendText(alice, 'hi');
    // The model takes its time: the chat shows Telegram's "Thinking…" placeholder meanwhile.
    await waitFor(() => t?.emu.draft(alice.id)?.plain === '', 'the placeholder');
    firstToken();
    const msg = await waitForText(
      t.emu,
      alice.id,
      (p) => p === 'Hello world, this reply streams in small pieces so you can watch it grow.',
      'final reply',
    );
    await t.h.core.idle();
    const drafts = t.emu.drafts(alice.id);
    // The placeholder, then the text growing in one draft (one id, with a Stop button).
    expect(drafts[0]?.plain).toBe('');
    const shown = drafts.filter((d) => d.plain !== '');
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.every((d, i) => i === 0 || d.plain.length >= (shown[i - 1]?.plain.length ?? 0))).toBe(true);
    expect(new Set(drafts.map((d) => d.draft_id)).size).toBe(1);
    expect(drafts.every((d) => d.draft_id !== 0 && d.can_stop)).toBe(true);
    // Answers are rich messages (the default): the text drafts are rich drafts of the Markdown.
    expect(shown.at(-1)?.rich).toContain('**world**');
    // The answer is one message, posted complete: never edited; the draft is gone.
    expect(msg.rich).toBe(reply);
    expect(msg.history).toHaveLength(1);
    expect(texts(t.emu, alice.id)).toHaveLength(1);
    expect(t.emu.calls.filter((c) => c.method === 'editMessageText')).toEqual([]);
    expect(t.emu.draft(alice.id)).toBeUndefined();
    const lastDraftAt = Math.max(
      ...t.emu.calls
        .filter((c) => c.method === 'sendMessageDraft' || c.method === 'sendRichMessageDraft')
        .map((c) => c.at),
    );
    const postedAt = t.emu.calls.find((c) => c.method === 'sendRichMessage')?.at ?? 0;
    expect(lastDraftAt).toBeLessThanOrEqual(postedAt);
  });

  it('with telegram.streaming = "edit": streams a reply into one edited message and shows typing', async () => {
    // As HTML here; the rich way of streaming by edits is in outbound.test.ts and rich.test.ts.
    t = await startTelegramTest({ telegram: { streaming: 'edit', rich_messages: 'off' } });
    const reply = 'Hello **world**, this reply streams in small pieces so you can watch it grow.';
    // ~1.6 s of streaming: long enough for "typing…" (after 1 s) and for several edits.
    t.llm.push({ text: reply, chunkSize: 6, delayMs: 120 });
    t.emu.sendText(alice, 'hi');
    const msg = await waitForText(
      t.emu,
      alice.id,
      (p) => p === 'Hello world, this reply streams in small pieces so you can watch it grow.',
      'final reply',
    );
    expect(msg.parse_mode).toBe('HTML');
    expect(msg.text).toContain('<b>world</b>');
    // Streamed: the one message went through several versions, and no second reply message appeared.
    expect(msg.history.length).toBeGreaterThan(1);
    expect(texts(t.emu, alice.id)).toHaveLength(1);
    expect(t.emu.chatActions.some((a) => a.chat_id === alice.id && a.action === 'typing')).toBe(true);
    expect(t.llm.chatRequests()).toHaveLength(1);
    expect(t.emu.dropPendingCalls).toEqual([false]);
    expect(t.channel().health()).toBeNull();
    expect(t.emu.commands.map((c: { command: string }) => c.command)).toEqual([
      'start',
      'help',
      'new',
      'stop',
      'compact',
      'usage',
      'status',
      'model',
      'sethome',
      'jobs',
      'rules',
      'mcp',
    ]);
  });

  it('a short reply that is ready at once is one message: no edit, no typing indicator', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'Short and quick.', chunkSize: 4 });
    t.emu.sendText(alice, 'hi');
    const msg = await waitForText(t.emu, alice.id, (p) => p === 'Short and quick.', 'reply');
    const replied = Date.now();
    await t.h.core.idle();
    // An indicator left armed would have started before the reply and show one typing delay later:
    // nothing can announce its absence, so this waits out that delay (counted from the reply).
    await new Promise((r) => setTimeout(r, Math.max(0, replied + TYPING_DELAY_MS + 100 - Date.now())));
    expect(msg.history).toEqual(['Short and quick.']);
    expect(texts(t.emu, alice.id)).toHaveLength(1);
    expect(t.emu.chatActions.filter((a) => a.chat_id === alice.id)).toEqual([]);
    expect(t.emu.calls.filter((c) => c.method === 'editMessageText')).toEqual([]);
    // Done before the placeholder's delay: no draft either.
    expect(t.emu.calls.filter((c) => c.method === 'sendMessageDraft')).toEqual([]);
  });

  it('handles updates that were pending before start (never dropped) in order', async () => {
    t = await startTelegramTest({
      // The model is scripted before the bot starts: the pending updates are taken at once.
      beforeStart: (emu, llm) => {
        emu.sendText(alice, 'one');
        emu.sendText(alice, 'two');
        llm.setHandler((body) => {
          const users = (body.messages as Array<{ role: string; content: string }>)
            .filter((m) => m.role === 'user')
            .map((m) => m.content);
          return { text: `seen: ${users.join(' + ')}` };
        });
      },
    });
    await waitForText(t.emu, alice.id, (p) => p.includes('two'), 'answer covering both messages');
    await waitFor(() => t?.emu.pendingUpdates().length === 0, 'updates confirmed');
    expect(t.emu.dropPendingCalls).toEqual([false]);
    const seen = t.llm
      .chatRequests()
      .flatMap((r) =>
        (r.body.messages as Array<{ role: string; content: string }>)
          .filter((m) => m.role === 'user')
          .map((m) => m.content),
      );
    expect([...new Set(seen)]).toEqual(['one', 'two']);
  });

  it('answers commands without the model; unknown commands get help', async () => {
    t = await startTelegramTest();
    t.emu.sendText(alice, '/status');
    await waitForText(
      t.emu,
      alice.id,
      (p) => p.startsWith('Status') && p.includes('Model: test-model'),
      '/status reply',
    );
    t.llm.models = ['test-model', 'other-model'];
    t.emu.sendText(alice, '/model other-model');
    await waitForText(t.emu, alice.id, (p) => p === 'Model set to other-model.', '/model reply');
    // A name the endpoint does not list is refused, as doctor would: the model stays.
    t.emu.sendText(alice, '/model gpt-nope');
    await waitForText(
      t.emu,
      alice.id,
      (p) =>
        p.startsWith('"gpt-nope" is not listed by') &&
        p.includes('(it lists: test-model, other-model); the model was not changed'),
      '/model refusal of an unlisted name',
    );
    t.emu.sendText(alice, '/model two words');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('A model name is one word'), '/model refusal');
    expect((await t.h.core.status({ channel: 'telegram', chatKey: String(alice.id) })).model).toBe('other-model');
    t.emu.sendText(alice, '/frobnicate');
    await waitForText(
      t.emu,
      alice.id,
      (p) => p.startsWith('Unknown command /frobnicate') && p.includes('/new'),
      'help',
    );
    t.emu.sendText(alice, '/sethome');
    await waitForText(t.emu, alice.id, (p) => p.includes('receives your notifications'), '/sethome reply');
    expect(JSON.parse((await getSetting(t.h.core.db, `home_chat:telegram:${alice.id}`)) ?? '{}')).toEqual({
      channel: 'telegram',
      chatKey: String(alice.id),
      threadKey: '',
    });
    t.emu.sendText(alice, '/new');
    await waitForText(t.emu, alice.id, (p) => p.includes('fresh conversation'), '/new reply');
    t.emu.sendText(alice, '/rules');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('No stored rules.'), '/rules reply');
    const aliceId = `telegram:${alice.id}`;
    await t.h.core.db
      .insertInto('approval_rules')
      .values({
        tool_glob: 'bash',
        path_glob: null,
        action: 'allow',
        priority: 0,
        conversation_id: null,
        user_id: aliceId,
        created_by: aliceId,
        created_at: Date.now(),
      })
      .execute();
    t.emu.sendText(alice, '/rules');
    const listed = await waitForText(t.emu, alice.id, (p) => p.startsWith('ID  tool'), '/rules listing');
    const id = /\n(\d+) {2}bash {2}\* {2}allow {2}user telegram:/.exec(listed.plain)?.[1];
    expect(id).toBeDefined();
    t.emu.sendText(alice, `/rules revoke ${id}`);
    await waitForText(t.emu, alice.id, (p) => p.startsWith(`Revoked rule ${id}  bash`), '/rules revoke reply');
    expect(await t.h.core.listRules(aliceId)).toEqual([]);
    expect(t.llm.chatRequests()).toHaveLength(0);
  });

  it('gives an unknown user a pairing code once and never calls the model', async () => {
    t = await startTelegramTest();
    t.emu.sendText(stranger, 'hello?');
    const msg = await waitForText(t.emu, stranger.id, (p) => p.includes('pairing code'), 'pairing code');
    const code = /code is ([A-Z0-9]{6})/.exec(msg.plain)?.[1];
    expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/);
    t.emu.sendText(stranger, 'hello again?');
    t.emu.sendText(stranger, '/start');
    await waitFor(() => t?.emu.pendingUpdates().length === 0, 'updates handled');
    // Handled means confirmed; give the handler of the last update its turn by round-tripping once more.
    t.emu.sendText(alice, '/help');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('Commands'), 'help for alice');
    expect(texts(t.emu, stranger.id)).toHaveLength(1);
    expect(t.llm.chatRequests()).toHaveLength(0);

    // Once paired, the same user reaches the model.
    const paired = await t.h.core.approvePairing(code as string, 'cli');
    expect(paired).toMatchObject({ ok: true, channel: 'telegram', userId: String(stranger.id) });
    // They are told they were let in, once.
    await waitForText(t.emu, stranger.id, (p) => p.includes("You're in"), 'welcome after pairing');
    await t.h.core.sweep();
    expect(texts(t.emu, stranger.id).filter((m) => m.plain.includes("You're in"))).toHaveLength(1);
    t.llm.push({ text: 'welcome aboard' });
    t.emu.sendText(stranger, 'now?');
    await waitForText(t.emu, stranger.id, (p) => p === 'welcome aboard', 'reply after pairing');
    expect(userTexts(t)).toEqual(['now?']);
  });
});

describe('telegram: health', () => {
  it('reports when polling dies because another deployment set a webhook (409)', async () => {
    t = await startTelegramTest();
    expect(t.channel().health()).toBeNull();
    await new Api(t.emu.token, { apiRoot: t.emu.apiRoot }).setWebhook('https://elsewhere.example.com/hook');
    const problem = await waitFor(() => t?.channel().health(), 'health problem');
    expect(problem).toMatch(/409|Conflict/);
  });
});

describe('telegram: access', () => {
  it('an admin approves a pairing from a DM button; the user is told', async () => {
    t = await startTelegramTest({ overrides: { access: { admins: `telegram:${bob.id}` } } });
    t.emu.sendText(stranger, 'let me in');
    const dm = await waitFor(
      () => texts(t?.emu as never, bob.id).find((m) => m.plain.startsWith('🔑 Pairing request')),
      'admin DM',
    );
    // Alice is not an admin: her tap is refused.
    const refused = t.emu.tap(alice, bob.id, dm.message_id, button(dm, 'Approve'));
    await waitFor(() => t?.emu.callbackAnswers.find((a) => a.callback_query_id === refused), 'refusal');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === refused)?.show_alert).toBe(true);
    expect(await t.h.core.isAllowed('telegram', String(stranger.id))).toBe(false);
    t.emu.tap(bob, bob.id, dm.message_id, button(dm, 'Approve'));
    await waitForText(t.emu, stranger.id, (p) => p.includes("You're in"), 'user told');
    expect(await t.h.core.isAllowed('telegram', String(stranger.id))).toBe(true);
    await waitFor(() => dm.plain.startsWith('✅ Paired') && !dm.reply_markup, 'DM edited');
    // Exactly one welcome, also after a sweep (which welcomes whoever was not welcomed yet).
    await t.h.core.sweep();
    await t.h.core.idle();
    const told = texts(t.emu, stranger.id).filter((m) => m.plain.includes("You're in") || m.plain.includes('let in'));
    expect(told).toHaveLength(1);
  });

  it('answers a flood with one notice, not one per message', async () => {
    t = await startTelegramTest({ overrides: { access: { rate_limit_per_minute: 2 } } });
    t.llm.setHandler(() => ({ text: 'ok' }));
    for (let i = 0; i < 6; i++) t.emu.sendText(alice, `msg ${i}`);
    await waitForText(t.emu, alice.id, (p) => p.includes('too fast'), 'rate-limit notice');
    await waitFor(() => t?.emu.pendingUpdates().length === 0, 'all updates confirmed');
    t.emu.sendText(alice, '/help');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('Commands'), 'help after flood');
    await t.h.core.idle();
    const notices = texts(t.emu, alice.id).filter((m) => m.plain.includes('too fast'));
    expect(notices).toHaveLength(1);
    // The one notice covers every dropped message: it says for how long they are dropped.
    expect(notices[0]?.plain).toMatch(/this one and any you send in the next ([1-9]|[1-5]\d|60) s are dropped/);
    // Dropped means dropped: the model saw the two allowed messages and none of the others.
    const seen = new Set(
      t.llm
        .chatRequests()
        .flatMap((r) =>
          (r.body.messages as Array<{ role: string; content: string }>)
            .filter((m) => m.role === 'user')
            .map((m) => m.content),
        ),
    );
    expect([...seen].sort()).toEqual(['msg 0', 'msg 1']);
  });
});

describe('telegram: groups and topics', () => {
  const group = { chatId: -100123, chatType: 'supergroup' as const };

  it('ignores group messages that do not address the bot; answers mentions and replies', async () => {
    t = await startTelegramTest();
    t.emu.sendText(alice, 'just chatting among humans', group);
    t.llm.push({ text: 'you called?' }, { text: 'replying to the reply' });
    const mention = '@switchboard_test_bot what time is it';
    t.emu.sendText(alice, mention, { ...group, entities: [{ type: 'mention', offset: 0, length: 21 }] });
    const answer = await waitForText(t.emu, group.chatId, (p) => p === 'you called?', 'reply to mention');
    t.emu.sendText(alice, 'and this?', { ...group, replyTo: answer.message_id });
    await waitForText(t.emu, group.chatId, (p) => p === 'replying to the reply', 'reply to reply');
    expect(userTexts(t)).toEqual(['what time is it', 'and this?']);
    expect(texts(t.emu, group.chatId)).toHaveLength(2);
  });

  it('treats each forum topic as its own conversation and answers inside the topic', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'topic seven' }, { text: 'topic nine' });
    const mention = { type: 'mention', offset: 0, length: 21 };
    t.emu.sendText(alice, '@switchboard_test_bot in seven', { ...group, threadId: 7, entities: [mention] });
    await waitForText(t.emu, group.chatId, (p) => p === 'topic seven', 'topic 7 reply');
    t.emu.sendText(alice, '@switchboard_test_bot in nine', { ...group, threadId: 9, entities: [mention] });
    const nine = await waitForText(t.emu, group.chatId, (p) => p === 'topic nine', 'topic 9 reply');
    const seven = texts(t.emu, group.chatId).find((m) => m.plain === 'topic seven');
    expect(seven?.message_thread_id).toBe(7);
    expect(nine.message_thread_id).toBe(9);
    const convs = await t.h.core.db
      .selectFrom('conversations')
      .select(['chat_key', 'thread_key'])
      .orderBy('thread_key')
      .execute();
    expect(convs).toEqual([
      { chat_key: String(group.chatId), thread_key: '7' },
      { chat_key: String(group.chatId), thread_key: '9' },
    ]);
    // The second request carries only its own topic's history.
    const second = t.llm.chatRequests()[1]?.body.messages as Array<{ role: string; content: string }>;
    expect(second.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['in nine']);
  });
});

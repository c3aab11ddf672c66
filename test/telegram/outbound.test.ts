import { afterEach, describe, expect, it } from 'vitest';
import { checkTelegramHtml } from '../emulators/telegram-html.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

/** A long Markdown reply: prose, code blocks with markup-looking content, and a table. */
function longReply(): { markdown: string; markers: string[] } {
  const markers: string[] = [];
  const parts: string[] = ['# Report <draft> & notes', ''];
  for (let s = 0; s < 16; s++) {
    markers.push(`para-${s}`);
    parts.push(
      `Section para-${s}: the value of a < b && c > d matters **a lot** here, see [docs](https://example.com/?q=${s}&x=1).`,
      '',
    );
    parts.push('```html');
    for (let l = 0; l < 12; l++) {
      markers.push(`code-${s}-${l}`);
      parts.push(`<div class="x">code-${s}-${l} &amp; more</div>`);
    }
    parts.push('```', '');
  }
  parts.push('| key | value |', '|---|---|');
  for (let r = 0; r < 20; r++) {
    markers.push(`row-${r}`);
    parts.push(`| row-${r} | ${'v'.repeat(r + 1)} |`);
  }
  return { markdown: parts.join('\n'), markers };
}

describe('telegram: outbound formatting and delivery', () => {
  // With rich messages (the default) such a reply is one message: test/telegram/rich.test.ts.
  it('a 10 000-character reply with code blocks and a table arrives as valid HTML chunks (rich messages off)', async () => {
    t = await startTelegramTest({ telegram: { rich_messages: 'off' } });
    const { markdown, markers } = longReply();
    expect(markdown.length).toBeGreaterThan(10_000);
    t.llm.push({ text: markdown, chunkSize: 700 });
    t.emu.sendText(alice, 'write the report');
    await waitForText(t.emu, alice.id, (p) => p.includes('row-19 | vvvvvvvvvvvvvvvvvvvv'), 'last chunk', 20_000);
    await t.h.core.idle();
    await t.channel().idle();
    const msgs = texts(t.emu, alice.id);
    expect(msgs.length).toBeGreaterThan(2);
    for (const m of msgs) {
      expect(m.parse_mode).toBe('HTML');
      const check = checkTelegramHtml(m.text);
      expect(check.ok).toBe(true);
      expect(m.plain.length).toBeLessThanOrEqual(4096);
      // A chunk never ends inside an open code block: every <pre> it opens, it closes.
      expect((m.text.match(/<pre>/g) ?? []).length).toBe((m.text.match(/<\/pre>/g) ?? []).length);
    }
    const all = msgs.map((m) => m.plain).join('\n');
    for (const marker of markers) expect(all).toContain(marker);
    expect(all).toContain('<div class="x">code-0-0 &amp; more</div>');
    expect(all).toContain('Report <draft> & notes');
    // Each marker appears exactly once: nothing was duplicated across chunks.
    for (const marker of ['para-3:', 'code-5-7 ', 'row-11 ']) expect(all.split(marker)).toHaveLength(2);
  });

  it('paces back-to-back sends under Telegram’s limits (past a chat’s burst of five it waits), and does not when telegram.pace_sends is off', async () => {
    const chunkedReply = async (paceSends?: boolean) => {
      // HTML chunks: more messages than a chat's burst (a rich message would hold the reply whole).
      const telegram = { rich_messages: 'off', ...(paceSends === undefined ? {} : { pace_sends: paceSends }) };
      const test = await startTelegramTest({ telegram });
      t = test;
      // Long enough for more than five messages: past the per-chat burst, pacing must wait
      // however slowly the machine sends.
      const { markdown } = longReply();
      test.llm.push({ text: [markdown, markdown, markdown].join('\n\n'), chunkSize: 5000 });
      test.emu.sendText(alice, 'write the report');
      await waitFor(
        () => texts(test.emu, alice.id).filter((m) => m.plain.includes('row-19 |')).length === 3,
        'last chunk',
        30_000,
      );
      await test.h.core.idle();
      await test.channel().idle();
      const sent = texts(test.emu, alice.id).length;
      const waits = test.channel().pacer.waits;
      await test.close();
      t = null;
      return { sent, waits };
    };
    // The chunks go out one after another: more than the five in a row Telegram allows a chat.
    const paced = await chunkedReply();
    expect(paced.sent).toBeGreaterThan(5);
    expect(paced.waits).toBeGreaterThan(0);
    const unpaced = await chunkedReply(false);
    expect(unpaced.sent).toBe(paced.sent);
    expect(unpaced.waits).toBe(0);
  });

  it('falls back to plain text when Telegram rejects the entities; nothing is lost', async () => {
    t = await startTelegramTest({ telegram: { rich_messages: 'off' } });
    t.emu.rejectEntities(1000);
    t.llm.push({ text: 'Use **bold** and `a<b` & [link](https://example.com) please.' });
    t.emu.sendText(alice, 'format something');
    const msg = await waitForText(t.emu, alice.id, (p) => p === 'Use bold and a<b & link please.', 'plain-text reply');
    expect(msg.parse_mode).toBeUndefined();
    expect(msg.text).toBe('Use bold and a<b & link please.');
    await t.h.core.idle();
    await t.channel().idle();
    expect(texts(t.emu, alice.id)).toHaveLength(1);
  });

  /**
   * A storm's retry_after. The Bot API sends whole seconds; a fraction makes the client take the
   * same paths (the transport waits out a short one, the presenter a third one) with six waits of
   * 0.2 s instead of 1 s each, which is what these tests spent their time on (5 s each).
   */
  const STORM_RETRY_AFTER = 0.2;

  // Answers as rich messages (the default) and as HTML: the same guarantees.
  for (const rich of ['auto', 'off'] as const) {
    const post = rich === 'off' ? 'sendMessage' : 'sendRichMessage';
    const draft = rich === 'off' ? 'sendMessageDraft' : 'sendRichMessageDraft';
    it(`429 storms on drafts and on the final ${post} lose and duplicate nothing; order holds (rich_messages = ${rich})`, async () => {
      t = await startTelegramTest({ telegram: { rich_messages: rich } });
      t.emu.fail(draft, 3, { status: 429, retryAfter: STORM_RETRY_AFTER });
      t.emu.fail(post, 3, { status: 429, retryAfter: STORM_RETRY_AFTER });
      const first = `First answer. ${'Lots of words here. '.repeat(30)}End of first.`;
      t.llm.push({ text: first, chunkSize: 40, delayMs: 20 }, { text: 'Second answer, after the first.' });
      t.emu.sendText(alice, 'question one');
      await waitForText(t.emu, alice.id, (p) => p.endsWith('End of first.'), 'first answer complete', 25_000);
      t.emu.sendText(alice, 'question two');
      await waitForText(t.emu, alice.id, (p) => p === 'Second answer, after the first.', 'second answer', 25_000);
      await t.h.core.idle();
      await t.channel().idle();
      const msgs = texts(t.emu, alice.id);
      expect(msgs.map((m) => m.plain)).toEqual([first.replace(/\s+$/, ''), 'Second answer, after the first.']);
      expect(msgs.every((m) => m.history.length === 1)).toBe(true);
      expect(t.emu.calls.filter((c) => !c.ok && c.method === post)).toHaveLength(3);
      expect(t.emu.draft(alice.id)).toBeUndefined();
    });

    it(`429 storms on ${post} and editMessageText (streaming by edits) lose and duplicate nothing; order holds (rich_messages = ${rich})`, async () => {
      t = await startTelegramTest({ telegram: { streaming: 'edit', rich_messages: rich } });
      // Two short 429s on the post are waited out in the transport, so the post carries the early
      // text and the rest arrives by edits; the third 429 of an edit goes back to the presenter.
      t.emu.fail(post, 2, { status: 429, retryAfter: STORM_RETRY_AFTER });
      t.emu.fail('editMessageText', 3, { status: 429, retryAfter: STORM_RETRY_AFTER });
      const first = `First answer. ${'Lots of words here. '.repeat(30)}End of first.`;
      t.llm.push({ text: first, chunkSize: 40, delayMs: 20 }, { text: 'Second answer, after the first.' });
      t.emu.sendText(alice, 'question one');
      await waitForText(t.emu, alice.id, (p) => p.endsWith('End of first.'), 'first answer complete', 25_000);
      t.emu.sendText(alice, 'question two');
      await waitForText(t.emu, alice.id, (p) => p === 'Second answer, after the first.', 'second answer', 25_000);
      await t.h.core.idle();
      await t.channel().idle();
      const msgs = texts(t.emu, alice.id).map((m) => m.plain);
      expect(msgs).toEqual([first.replace(/\s+$/, ''), 'Second answer, after the first.']);
      const rejected = t.emu.calls.filter((c) => !c.ok && (c.method === post || c.method === 'editMessageText'));
      expect(rejected.length).toBe(5);
    });

    it(`a 5xx from Telegram is retried after a back-off; the message shows once (rich_messages = ${rich})`, async () => {
      t = await startTelegramTest({ telegram: { rich_messages: rich } });
      t.emu.fail(post, 1, { status: 502, description: 'Bad Gateway' });
      t.llm.push({ text: 'made it through' });
      t.emu.sendText(alice, 'hello');
      await waitForText(t.emu, alice.id, (p) => p === 'made it through', 'reply after 502', 20_000);
      await t.h.core.idle();
      await t.channel().idle();
      expect(texts(t.emu, alice.id)).toHaveLength(1);
      expect(t.emu.calls.filter((c) => c.method === post && !c.ok)).toHaveLength(1);
    });
  }

  it('shows tool progress as a status line that ends with the outcome', async () => {
    t = await startTelegramTest();
    t.llm.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"ping"}' }] }, { text: 'echoed' });
    t.emu.sendText(alice, 'echo ping');
    await waitForText(t.emu, alice.id, (p) => p === 'echoed', 'final reply');
    const status = await waitFor(
      () => texts(t?.emu as never, alice.id).find((m) => m.plain.startsWith('✅ echo ping')),
      'tool status done',
    );
    expect(status.plain).toBe('✅ echo ping — echo: ping');
  });

  it('a running tool shows 🔧 until /stop cancels it', async () => {
    t = await startTelegramTest();
    t.llm.push({ toolCalls: [{ name: 'sleep', arguments: '{}' }] });
    t.emu.sendText(alice, 'take a nap');
    const status = await waitForText(t.emu, alice.id, (p) => p === '🔧 sleep…', 'running status line');
    t.emu.sendText(alice, '/stop');
    await waitForText(t.emu, alice.id, (p) => p === '⏹ Stopped.', '/stop reply');
    await waitFor(() => status.plain.startsWith('⏹ sleep'), 'status line shows cancelled');
    expect(t.llm.chatRequests()).toHaveLength(1);
  });
});

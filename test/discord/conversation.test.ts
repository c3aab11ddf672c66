/** Discord end to end: a DM streamed by edits, a guild mention answered in a thread, follow-ups there, long answers split. */
import { afterEach, describe, expect, it } from 'vitest';
import { alice, bob, type DiscordStack, startDiscordStack, waitFor, waitForMessage } from './stack.js';

let s: DiscordStack | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

describe('discord: conversations', () => {
  it('answers a DM, streaming the reply by edits of one message', async () => {
    s = await startDiscordStack();
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    s.llm.push({
      text: 'Hello **Alice**, here is a long streamed answer.',
      chunkSize: 8,
      pauses: [{ afterChars: 16, until: held }],
    });
    s.emu.dm(alice, 'hi');
    const dm = s.emu.dmChannel(alice).id;
    const live = await waitForMessage(s.emu, dm, (c) => c.startsWith('Hello'), 'the answer so far');
    expect(live.content.length).toBeLessThan(40);
    release();
    await waitFor(() => live.content === 'Hello **Alice**, here is a long streamed answer.', 'the whole answer');
    expect(live.edits).toBeGreaterThan(0);
    expect(s.emu.botMessages(dm)).toHaveLength(1);
  });

  it('in a server answers a mention in a thread on that message, then follow-ups there without a mention', async () => {
    s = await startDiscordStack();
    const general = s.emu.guildChannel('5000').id;
    s.llm.push({ text: 'first answer' }, { text: 'second answer' });
    s.emu.guildMessage(bob, general, 'nobody asked the bot');
    const opening = s.emu.guildMessage(alice, general, 'what is up?', true);
    await waitForMessage(s.emu, opening.id, (c) => c === 'first answer', 'answer in the thread');
    const thread = s.emu.channels.get(opening.id);
    expect(thread).toMatchObject({ type: 11, parent_id: general });
    expect(s.emu.botMessages(general)).toEqual([]);
    s.emu.guildMessage(alice, opening.id, 'and then?');
    await waitForMessage(s.emu, opening.id, (c) => c === 'second answer', 'follow-up answered');
    const sent = s.llm
      .chatRequests()
      .at(-1)
      ?.body.messages.filter((m: { role: string }) => m.role === 'user');
    expect(JSON.stringify(sent)).toContain('what is up?');
    expect(JSON.stringify(sent)).not.toContain('nobody asked');
    expect(JSON.stringify(sent)).not.toContain(`<@${s.emu.bot.id}>`);
  });

  it('splits an answer over 2 000 characters into messages Discord takes', async () => {
    s = await startDiscordStack();
    const para = (n: number) => `Paragraph ${n}: ${'word '.repeat(80).trim()}.`;
    const text = Array.from({ length: 12 }, (_, i) => para(i)).join('\n\n');
    s.llm.push({ text });
    s.emu.dm(alice, 'long please');
    const dm = s.emu.dmChannel(alice).id;
    await waitFor(() => s?.emu.botMessages(dm).some((m) => m.content.includes('Paragraph 11')), 'the last part');
    const parts = s.emu.botMessages(dm);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.content.length).toBeLessThanOrEqual(2000);
    expect(parts.map((p) => p.content).join('\n\n')).toBe(text);
  });
});

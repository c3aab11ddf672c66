/**
 * Rich messages for answers against the emulator: a 10 000-character answer with a table and
 * code is one rich message whose Markdown keeps the table; an answer over 32 768 characters
 * splits at block boundaries; a server without rich messages is detected once, logged once, and
 * answers go as HTML for the rest of the run; `rich_messages = "on"` never falls back;
 * `rich_messages = "off"` sends HTML.
 */
import { marked } from 'marked';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const TABLE = ['| Name | Size | Kind |', '|:-----|-----:|------|', '| alpha | 1 | file |', '| beta | 22 | dir |'].join(
  '\n',
);
const CODE = ['```ts', 'export function add(a: number, b: number): number {', '  return a + b;', '}', '```'].join('\n');

/** An answer of about `chars` characters: a heading, paragraphs, a table and a code block, repeated. */
function answer(chars: number): string {
  const section = (i: number) =>
    [
      `## Section ${i}`,
      `Paragraph ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(8).trim()}.`,
      TABLE,
      CODE,
      `- item one of ${i}\n- item two of ${i}`,
    ].join('\n\n');
  const out: string[] = [];
  for (let i = 1; out.join('\n\n').length < chars; i++) out.push(section(i));
  return out.join('\n\n');
}

function tablesIn(markdown: string): number {
  return marked.lexer(markdown, { gfm: true }).filter((tok) => tok.type === 'table').length;
}

describe('telegram: rich messages', () => {
  it('a 10 000-character answer with tables and code is one rich message whose tables are tables', async () => {
    t = await startTelegramTest();
    const text = answer(10_000);
    expect(text.length).toBeGreaterThanOrEqual(10_000);
    t.llm.push({ text });
    t.emu.sendText(alice, 'report');
    await waitFor(() => texts(t?.emu as TelegramTest['emu'], alice.id).length > 0, 'the answer');
    await t.h.core.idle();
    const sent = texts(t.emu, alice.id);
    expect(sent).toHaveLength(1);
    const md = sent[0]?.rich ?? '';
    expect(md).toBe(text);
    expect(tablesIn(md)).toBe(tablesIn(text));
    expect(tablesIn(md)).toBeGreaterThan(5);
    expect(md).toContain('```ts\nexport function add');
    expect(t.emu.calls.filter((c) => c.method === 'sendMessage')).toEqual([]);
    expect(t.channel().surface.rich.inForce()).toBe(true);
  });

  it('an answer over 32 768 characters splits at block boundaries, each part within the limits', async () => {
    t = await startTelegramTest();
    const text = answer(70_000);
    t.llm.push({ text });
    t.emu.sendText(alice, 'a long report');
    await waitFor(() => {
      const all = texts(t?.emu as TelegramTest['emu'], alice.id);
      return all.length >= 3 && all.map((m) => m.rich).join('\n\n') === text;
    }, 'the answer in parts');
    await t.h.core.idle();
    const parts = texts(t.emu, alice.id).map((m) => m.rich ?? '');
    expect(parts.length).toBe(3);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(32_768);
      // Every part starts with a whole block and its tables are still tables.
      expect(
        p.startsWith('## Section') ||
          p.startsWith('Paragraph') ||
          p.startsWith('|') ||
          p.startsWith('```') ||
          p.startsWith('- '),
      ).toBe(true);
      expect(tablesIn(p)).toBeGreaterThan(0);
    }
  });

  it('a server without rich messages: detected once, logged once, then HTML for the rest of the run', async () => {
    t = await startTelegramTest({ beforeStart: (emu) => emu.forget('sendRichMessage') });
    const warn = vi.spyOn(t.channel().surface.rich['log'], 'warn');
    t.llm.push({ text: `First answer.\n\n${TABLE}` });
    t.emu.sendText(alice, 'hi');
    await waitFor(() => texts(t?.emu as TelegramTest['emu'], alice.id).length === 1, 'the first answer');
    t.llm.push({ text: 'Second **answer**.' });
    t.emu.sendText(alice, 'again');
    await waitFor(() => texts(t?.emu as TelegramTest['emu'], alice.id).length === 2, 'the second answer');
    await t.h.core.idle();
    const [first, second] = texts(t.emu, alice.id);
    expect(first?.parse_mode).toBe('HTML');
    expect(first?.text).toContain('<pre>');
    expect(first?.plain).toContain('First answer.');
    expect(second?.text).toBe('Second <b>answer</b>.');
    expect(t.emu.calls.filter((c) => c.method === 'sendRichMessage')).toHaveLength(1);
    expect(warn.mock.calls.filter((c) => String(c[1]).includes('refused rich messages'))).toHaveLength(1);
    expect(t.channel().surface.rich.inForce()).toBe(false);
    expect(t.channel().surface.rich.refused).toMatch(/^404 /);
  });

  it('a refused rich answer too long for one HTML message is sent again as HTML parts', async () => {
    t = await startTelegramTest({ beforeStart: (emu) => emu.forget('sendRichMessage') });
    const text = answer(9_000);
    t.llm.push({ text });
    t.emu.sendText(alice, 'report');
    await waitFor(
      () => {
        const all = texts(t?.emu as TelegramTest['emu'], alice.id);
        return all.length >= 3 && (all.at(-1)?.plain.includes('item two of') ?? false);
      },
      'the answer as HTML parts',
      15_000,
    );
    await t.h.core.idle();
    const sent = texts(t.emu, alice.id);
    expect(sent.every((m) => m.parse_mode === 'HTML' && m.plain.length <= 4096)).toBe(true);
    expect(t.emu.calls.filter((c) => c.method === 'sendRichMessage')).toHaveLength(1);
  });

  it('rich_messages = "on": a server that refuses them is not fallen back from; the answer fails', async () => {
    t = await startTelegramTest({
      telegram: { rich_messages: 'on' },
      beforeStart: (emu) => emu.forget('sendRichMessage'),
    });
    const tt = t;
    t.llm.push({ text: 'Only as a rich message.' });
    t.emu.sendText(alice, 'hi');
    await waitFor(async () => {
      const row = await tt.h.core.db
        .selectFrom('deliveries')
        .selectAll()
        .where('kind', '=', 'reply')
        .executeTakeFirst();
      return row?.status === 'failed' ? row : undefined;
    }, 'the answer refused for good');
    expect(texts(t.emu, alice.id)).toEqual([]);
    expect(t.emu.calls.filter((c) => c.method === 'sendMessage')).toEqual([]);
    expect(t.channel().surface.rich.inForce()).toBe(true);
  });

  it('rich_messages = "off" sends answers as HTML', async () => {
    t = await startTelegramTest({ telegram: { rich_messages: 'off' } });
    t.llm.push({ text: `Plain **bold** answer.\n\n${TABLE}` });
    t.emu.sendText(alice, 'hi');
    await waitFor(() => texts(t?.emu as TelegramTest['emu'], alice.id).length === 1, 'the answer');
    await t.h.core.idle();
    const [msg] = texts(t.emu, alice.id);
    expect(msg?.parse_mode).toBe('HTML');
    expect(msg?.text).toContain('<b>bold</b>');
    expect(msg?.rich).toBeUndefined();
    expect(t.emu.calls.filter((c) => c.method.startsWith('sendRich'))).toEqual([]);
    expect(t.channel().surface.rich.inForce()).toBe(false);
    expect(t.channel().surface.rich.refused).toBeNull();
  });

  it('a streamed rich answer in a private chat shows as a rich draft, then one rich message', async () => {
    t = await startTelegramTest();
    const text = `Intro line.\n\n${TABLE}\n\n${'More words to stream. '.repeat(20).trim()}`;
    t.llm.push({ text, chunkSize: 40, delayMs: 60 });
    t.emu.sendText(alice, 'stream');
    await waitFor(() => (t?.emu.drafts(alice.id) ?? []).some((d) => d.rich?.startsWith('Intro')), 'a rich draft');
    await waitFor(() => texts(t?.emu as TelegramTest['emu'], alice.id).length === 1, 'the answer');
    await t.h.core.idle();
    const [msg] = texts(t.emu, alice.id);
    expect(msg?.rich).toBe(text);
    expect(msg?.history).toHaveLength(1);
  });
});

// biome-ignore-all lint/suspicious/noExplicitAny: Block Kit JSON is loosely typed by nature
/**
 * Long or structured answers as Slack `markdown` blocks (`slack.markdown_blocks = "auto"`, the
 * default): Slack renders the model's Markdown itself, up to 12 000 characters in a message's
 * markdown blocks together; short plain prose stays a mrkdwn section; tables stay table blocks.
 * A workspace that refuses markdown blocks (`invalid_blocks`) gets sections for the rest of the
 * run, the refused answer sent again that way — split anew when it no longer fits one message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSlackEmitter } from '../../src/channels/slack/emitter.js';
import { asSections, MARKDOWN_BLOCK_CHARS } from '../../src/channels/slack/markdown-block.js';
import { parseMarkdown } from '../../src/delivery/render.js';
import { ALICE, type SlackStack, startSlackStack, waitFor } from './stack.js';

const emitter = createSlackEmitter(() => true);
const messages = (md: string, title?: string) =>
  emitter.markdown(parseMarkdown(md), title).map((p) => p.body as { text: string; blocks: any[] });
const types = (md: string) => messages(md).map((m) => m.blocks.map((b) => b.type));

const structured = '## Plan\n\n- read the file\n- fix it\n\n```ts\nconst x = 1 < 2;\n```';

describe('Slack markdown blocks (emitter)', () => {
  it('short plain prose stays a section; headings, lists and code go as one markdown block of the Markdown', () => {
    expect(types('Just a short answer, *nothing* more.')).toEqual([['section']]);
    const [only, ...rest] = messages(structured);
    expect(rest).toEqual([]);
    expect(only!.blocks).toEqual([{ type: 'markdown', text: structured }]);
    // The fallback text is the mrkdwn rendering (notifications, search), escaped.
    expect(only!.text).toContain('const x = 1 &lt; 2;');
  });

  it('prose longer than one section goes as a markdown block; a title opens it in bold', () => {
    const long = 'word '.repeat(700).trim();
    const [only] = messages(long, 'disk *full*');
    expect(only!.blocks).toHaveLength(1);
    expect(only!.blocks[0].type).toBe('markdown');
    expect(only!.blocks[0].text).toBe(`🔔 **disk \\*full\\***\n\n${long}`);
  });

  it('a table within the limits stays a table block between markdown blocks, in one message', () => {
    const table = '| a | b |\n|---|---|\n| 1 | 2 |';
    expect(types(`${structured}\n\n${table}\n\n# After\n\ntext`)).toEqual([['markdown', 'table', 'markdown']]);
  });

  it('a message with markdown blocks stays within 12 000 characters in all, its table counted', () => {
    const table =
      '| a | b |\n|---|---|\n' + Array.from({ length: 90 }, (_, i) => `| ${'x'.repeat(20)}${i} | y |`).join('\n');
    const prose = (n: number) => `# Part ${n}\n\n${'word '.repeat(1_000).trim()}`;
    const ms = messages(`${prose(1)}\n\n${table}\n\n${prose(2)}`);
    expect(ms.map((m) => m.blocks.map((b) => b.type))).toEqual([['markdown', 'table'], ['markdown']]);
    const chars = (m: { blocks: any[] }) =>
      m.blocks.reduce(
        (n, b) =>
          n + (b.type === 'table' ? b.rows.flat().reduce((k: number, c: any) => k + c.text.length, 0) : b.text.length),
        0,
      );
    for (const m of ms) expect(chars(m)).toBeLessThanOrEqual(MARKDOWN_BLOCK_CHARS);
  });

  it('a 30 000-character answer: each message within 12 000 characters of markdown blocks, nothing lost, code reopened with its language', () => {
    const code =
      '```python\n' + Array.from({ length: 400 }, (_, i) => `print(${i})  # ${'y'.repeat(20)}`).join('\n') + '\n```';
    const paras = Array.from({ length: 30 }, (_, i) => `Para ${i}: ${'lorem ipsum '.repeat(60)}`);
    const md = ['# Title', ...paras.slice(0, 15), code, ...paras.slice(15)].join('\n\n');
    expect(md.length).toBeGreaterThan(30_000);
    const ms = messages(md);
    expect(ms.length).toBeGreaterThan(2);
    const all = ms.map((m) => m.blocks.map((b) => b.text).join('\n\n')).join('\n\n');
    for (const m of ms) {
      const chars = m.blocks.filter((b) => b.type === 'markdown').reduce((n, b) => n + b.text.length, 0);
      expect(chars).toBeLessThanOrEqual(MARKDOWN_BLOCK_CHARS);
      for (const b of m.blocks) if (b.type === 'markdown') expect(b.text.split('```').length % 2).toBe(1);
    }
    for (let i = 0; i < 30; i++) expect(all.split(`Para ${i}:`)).toHaveLength(2);
    for (let i = 0; i < 400; i++) expect(all).toContain(`print(${i})`);
    expect(all.match(/```python/g)!.length).toBeGreaterThan(1);
  });

  it('markdown blocks drawn as sections for a workspace without them; null when that outgrows one message', () => {
    const sections = asSections(messages(structured)[0]!.blocks)!;
    expect(sections.every((b) => b.type === 'section')).toBe(true);
    expect(sections.map((b: any) => b.text.text).join('\n')).toContain('const x = 1 &lt; 2;');
    // Escaping grows 11 000 "<" to 44 000 characters: over a message's 40 000.
    expect(asSections([{ type: 'markdown', text: '<'.repeat(11_000) }])).toBeNull();
  });
});

describe('Slack markdown blocks (end to end)', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  async function ask(text: string): Promise<void> {
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text }));
    await stack.quiesce();
  }

  async function undelivered(): Promise<unknown[]> {
    return stack.core.db.selectFrom('deliveries').select('status').where('status', '!=', 'delivered').execute();
  }

  const refusedCalls = () => stack.emu.calls.filter((c) => c.error === 'invalid_blocks');

  it('a 10 000-character answer with code and a table is one message: markdown, table, markdown', async () => {
    stack = await startSlackStack('http');
    const para = (i: number) => `Paragraph ${i}: ${'the quick brown fox & <friends> '.repeat(30)}`;
    const code = '```python\n' + Array.from({ length: 90 }, (_, i) => `print("line ${i}")`).join('\n') + '\n```';
    const table =
      '| name | value |\n|---|---:|\n' + Array.from({ length: 40 }, (_, i) => `| item${i} | ${i} |`).join('\n');
    const md = [para(1), para(2), code, para(3), table, para(4), para(5), para(6), para(7), para(8), para(9)].join(
      '\n\n',
    );
    expect(md.length).toBeGreaterThan(10_000);
    stack.llm.push({ text: md, chunkSize: 500 });
    await ask('long one please');
    await waitFor(() => stack.findBot('D1', 'Paragraph 9').length, 'the answer');
    const bots = stack.emu.botMessages('D1');
    expect(bots).toHaveLength(1);
    expect(bots[0]!.blocks!.map((b) => b.type)).toEqual(['markdown', 'table', 'markdown']);
    const text = bots[0]!
      .blocks!.filter((b) => b.type === 'markdown')
      .map((b) => b.text)
      .join('\n\n');
    // Slack gets the model's Markdown as it is: its own escapes, code with its language.
    expect(text).toContain('& <friends>');
    expect(text).toContain('```python\nprint("line 0")');
    expect(bots[0]!.blocks![1].rows).toHaveLength(41);
    expect(refusedCalls()).toEqual([]);
    expect(await undelivered()).toEqual([]);
    expect(stack.channel.surface.markdownBlocks.inForce).toBe(true);
  });

  it('a workspace that refuses markdown blocks gets sections: the refused answer again, later ones at once', async () => {
    stack = await startSlackStack('http');
    stack.emu.markdownBlocks.refuse = true;
    stack.llm.push({ text: structured }, { text: `${structured}\n\nsecond` });
    await ask('first');
    await waitFor(() => stack.findBot('D1', 'Plan').length, 'the first answer');
    expect(stack.channel.surface.markdownBlocks.refused).toBe('invalid_blocks');
    expect(stack.channel.surface.markdownBlocks.inForce).toBe(false);
    const refused = refusedCalls().length;
    expect(refused).toBeGreaterThan(0);
    await ask('second');
    await waitFor(() => stack.findBot('D1', 'second').length, 'the second answer');
    // Nothing more refused: the second answer was rendered as sections from the start.
    expect(refusedCalls()).toHaveLength(refused);
    const bots = stack.emu.botMessages('D1');
    expect(bots).toHaveLength(2);
    for (const m of bots) expect(m.blocks!.every((b) => b.type === 'section')).toBe(true);
    expect(bots[0]!.blocks![0].text.text).toContain('*Plan*');
    expect(await undelivered()).toEqual([]);
  });

  it('a refused answer whose sections outgrow one message is split anew, nothing lost', async () => {
    stack = await startSlackStack('http');
    stack.emu.markdownBlocks.refuse = true;
    stack.llm.push({ text: `- a list\n\n${'<'.repeat(11_000)}` });
    await ask('angles');
    await waitFor(
      async () => (await undelivered()).length === 0 && stack.emu.botMessages('D1').length >= 2,
      'the answer',
    );
    const bots = stack.emu.botMessages('D1');
    expect(bots.length).toBeGreaterThanOrEqual(2);
    const all = bots.flatMap((m) => m.blocks!.map((b) => b.text.text)).join('');
    expect(all.split('&lt;')).toHaveLength(11_001);
    expect(bots.flatMap((m) => m.blocks!).every((b) => b.type === 'section')).toBe(true);
  });

  it('the emulator refuses a markdown block over 12 000 characters, and 12 000 in a message together', async () => {
    stack = await startSlackStack('http');
    const post = async (blocks: unknown[]) => {
      const res = await fetch(`${stack.emu.apiUrl}chat.postMessage`, {
        method: 'POST',
        headers: { authorization: 'Bearer xoxb-emulator', 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'D1', text: 'x', blocks }),
      });
      return (await res.json()) as { ok: boolean; error?: string };
    };
    expect(await post([{ type: 'markdown', text: 'a'.repeat(12_000) }])).toMatchObject({ ok: true });
    expect(await post([{ type: 'markdown', text: 'a'.repeat(12_001) }])).toEqual({
      ok: false,
      error: 'invalid_blocks',
    });
    expect(
      await post([
        { type: 'markdown', text: 'a'.repeat(6_000) },
        { type: 'markdown', text: 'b'.repeat(6_001) },
      ]),
    ).toEqual({ ok: false, error: 'invalid_blocks' });
    expect(await post([{ type: 'markdown', text: '' }])).toEqual({ ok: false, error: 'invalid_blocks' });
  });
});

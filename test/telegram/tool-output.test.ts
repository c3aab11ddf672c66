/**
 * A finished tool's line on Telegram carries the tool's output in an expandable blockquote
 * (`<blockquote expandable>`), escaped and cut in the middle to stay under Telegram's 4096
 * characters; the emulator parses the HTML as Telegram does (balanced tags, `expandable` only on
 * a blockquote).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_OUTPUT_CHARS, toolHtml } from '../../src/channels/telegram/cards.js';
import { checkTelegramHtml } from '../emulators/telegram-html.js';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const nameOf = (p: string | null | undefined) => p ?? 'someone';

/** Run the echo tool with `text` in Alice's chat; resolves with its finished line. */
async function echoLine(t: TelegramTest, text: string) {
  t.llm.push({ toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text }) }] }, { text: 'echoed it' });
  t.emu.sendText(alice, 'echo something');
  await waitForText(t.emu, alice.id, (p) => p === 'echoed it', 'the answer');
  return waitFor(
    () => texts(t.emu, alice.id).find((m) => m.plain.startsWith('✅') && m.text.includes('<blockquote expandable>')),
    'the finished tool line with its output',
  );
}

describe('telegram: tool output on the finished tool line', () => {
  it('shows the output, escaped, in an expandable blockquote once the call finished', async () => {
    t = await startTelegramTest();
    const line = await echoLine(t, 'first <b>line</b> & more\nsecond line\nthird line');
    expect(line.parse_mode).toBe('HTML');
    expect(line.text).toContain(
      '<blockquote expandable>echo: first &lt;b&gt;line&lt;/b&gt; &amp; more\nsecond line\nthird line</blockquote>',
    );
    // The summary line stays as before, above the block; Telegram shows the output text as written.
    expect(line.plain).toMatch(/^✅ echo first <b>line<\/b> & more second line third line — echo: first <b>line/);
    expect(line.plain).toContain('echo: first <b>line</b> & more\nsecond line\nthird line');
  });

  it('a long output is cut in the middle under the 4096 limit; its beginning and end stay', async () => {
    t = await startTelegramTest();
    const body = Array.from({ length: 400 }, (_, i) => `row ${i} <tag> & "quoted" text`).join('\n');
    const line = await echoLine(t, `${body}\nTHE END`);
    expect(line.plain.length).toBeLessThanOrEqual(4096);
    const block = /<blockquote expandable>([\s\S]*)<\/blockquote>$/.exec(line.text)?.[1] ?? '';
    const shown = checkTelegramHtml(`<b>${block}</b>`);
    expect(shown.ok).toBe(true);
    const visible = shown.ok ? shown.text : '';
    expect(visible.length).toBeLessThanOrEqual(TOOL_OUTPUT_CHARS);
    expect(visible.startsWith('echo: row 0 <tag> & "quoted" text')).toBe(true);
    expect(visible.endsWith('THE END')).toBe(true);
    expect(visible).toMatch(/\n… \d+ characters cut …\n/);
  });
});

describe('telegram: the tool line HTML', () => {
  const done = { type: 'tool' as const, name: 'bash', label: 'bash ls', state: 'done' as const, summary: 'a.txt' };

  it('has no block while running, nor for output its summary already says whole', () => {
    expect(toolHtml({ ...done, state: 'running', output: 'a.txt\nb.txt' }, nameOf)).not.toContain('blockquote');
    expect(toolHtml({ ...done, output: 'a.txt' }, nameOf)).not.toContain('blockquote');
    expect(toolHtml({ ...done }, nameOf)).not.toContain('blockquote');
    expect(toolHtml({ ...done, output: 'a.txt\nb.txt' }, nameOf)).toBe(
      '✅ <code>bash ls</code> — a.txt\n<blockquote expandable>a.txt\nb.txt</blockquote>',
    );
  });

  it('a failed call shows its output too, and every line Telegram parses', () => {
    const html = toolHtml(
      { ...done, state: 'failed', summary: 'exit 2', output: 'ls: x: No such file\n</pre>&' },
      nameOf,
    );
    expect(html).toContain('<blockquote expandable>ls: x: No such file\n&lt;/pre&gt;&amp;</blockquote>');
    expect(checkTelegramHtml(html)).toMatchObject({ ok: true });
  });
});

describe('emulator: Telegram HTML with expandable blockquotes', () => {
  it('takes `expandable` on a blockquote only, and balanced tags only', () => {
    expect(checkTelegramHtml('<blockquote expandable>long\noutput</blockquote>')).toEqual({
      ok: true,
      text: 'long\noutput',
    });
    expect(checkTelegramHtml('<pre expandable>x</pre>')).toMatchObject({
      ok: false,
      description: expect.stringContaining('can\'t have attribute "expandable"'),
    });
    expect(checkTelegramHtml('<blockquote expandable>x')).toMatchObject({ ok: false });
    expect(checkTelegramHtml('<blockquote expandable><blockquote>x</blockquote></blockquote>')).toMatchObject({
      ok: false,
    });
  });
});

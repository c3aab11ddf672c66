// biome-ignore-all lint/suspicious/noExplicitAny: Block Kit JSON is loosely typed by nature
/**
 * Markdown tables on Slack: a table within Block Kit's limits (100 rows, 20 cells) is a table
 * block, one a message; a bigger one stays a monospace grid in a code block. End to end, the
 * emulator checks the limits Slack checks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { slackEmitter } from '../../src/channels/slack/emitter.js';
import { parseMarkdown } from '../../src/delivery/render.js';
import { ALICE, type SlackStack, startSlackStack, waitFor } from './stack.js';

function table(rows: number, cols = 3): string {
  const head = `| ${Array.from({ length: cols }, (_, c) => `h${c}`).join(' | ')} |`;
  const rule = `|${Array.from({ length: cols }, (_, c) => (c === 1 ? ' ---: ' : ' --- ')).join('|')}|`;
  const body = Array.from(
    { length: rows },
    (_, r) => `| ${Array.from({ length: cols }, (_, c) => (c === 2 && r === 0 ? '' : `r${r}c${c}`)).join(' | ')} |`,
  );
  return [head, rule, ...body].join('\n');
}

const messages = (md: string) => slackEmitter.markdown(parseMarkdown(md)).map((p) => p.body as { blocks: any[] });
const types = (md: string) => messages(md).map((m) => m.blocks.map((b) => b.type));

describe('Slack tables (emitter)', () => {
  it('a table within the limits is a table block between the text around it, in one message', () => {
    const [only, ...rest] = messages(`Before.\n\n${table(3)}\n\nAfter.`);
    expect(rest).toEqual([]);
    expect(only!.blocks.map((b) => b.type)).toEqual(['section', 'table', 'section']);
    const t = only!.blocks[1];
    expect(t.rows).toHaveLength(4);
    expect(t.rows[0].map((c: any) => c.text)).toEqual(['h0', 'h1', 'h2']);
    expect(t.rows[1]).toEqual([
      { type: 'raw_text', text: 'r0c0' },
      { type: 'raw_text', text: 'r0c1' },
      // An empty cell keeps a character: Slack refuses empty raw text.
      { type: 'raw_text', text: ' ' },
    ]);
    expect(t.column_settings).toEqual([{ align: 'left' }, { align: 'right' }, { align: 'left' }]);
  });

  it('99 rows and a header are one table block; 150 rows or 21 columns fall back to a code grid', () => {
    expect(types(table(99))).toEqual([['table']]);
    const big = messages(table(150));
    expect(big.flatMap((m) => m.blocks.map((b) => b.type)).every((t) => t === 'section')).toBe(true);
    expect(big[0]!.blocks[0].text.text.startsWith('```\nh0')).toBe(true);
    expect(types(table(2, 21))).toEqual([['section']]);
  });

  it('two tables go in two messages (one table a message)', () => {
    expect(types(`${table(2)}\n\nmiddle\n\n${table(2)}`)).toEqual([['table', 'section'], ['table']]);
  });
});

describe('Slack tables (end to end)', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('Slack takes the table block; a 150-row table arrives as code (in a markdown block), nothing refused', async () => {
    stack = await startSlackStack('http');
    stack.llm.push({ text: `Small:\n\n${table(5)}` }, { text: `Big:\n\n${table(150)}` });
    for (const q of ['small', 'big']) {
      await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: q }));
      await stack.quiesce();
    }
    await waitFor(() => stack.emu.botMessages('D1').length >= 2, 'both answers');
    const [small, ...big] = stack.emu.botMessages('D1');
    expect(small!.blocks!.map((b) => b.type)).toEqual(['section', 'table']);
    expect(small!.blocks![1].rows).toHaveLength(6);
    expect(big.length).toBeGreaterThan(0);
    // Longer than a section: Slack renders it from Markdown, the grid fenced as code.
    expect(big.flatMap((m) => m.blocks!.map((b) => b.type)).every((t) => t === 'markdown')).toBe(true);
    const text = big.map((m) => m.blocks!.map((b) => b.text).join('\n')).join('\n');
    expect(text).toContain('r149c0');
    expect(text).toMatch(/```\n[^`]*r149c0/);
    const bad = await stack.core.db
      .selectFrom('deliveries')
      .select('status')
      .where('status', '!=', 'delivered')
      .execute();
    expect(bad).toEqual([]);
  });
});

/**
 * The Markdown packer behind Telegram's rich messages: whole blocks joined while they fit the
 * character and block limits; a block too big alone cut so each piece still renders (a code block
 * keeps its fence and language, a table its header); a table wider than the column limit drawn
 * as a grid; raw HTML shown as text.
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { blockCount, packMarkdown } from '../../src/delivery/markdown-parts.js';

const lex = (md: string) => marked.lexer(md, { gfm: true });
const limits = { chars: 200, blocks: 20, tableColumns: 3 };

describe('packMarkdown', () => {
  it('keeps short Markdown as it is, in one part, with the title first', () => {
    const md = '# Head\n\nSome *text*.\n\n```py\nprint(1)\n```';
    expect(packMarkdown(lex(md), limits, '**Title**')).toEqual([`**Title**\n\n${md}`]);
  });

  it('splits at block boundaries when the characters run out', () => {
    const paras = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} ${'x'.repeat(50)}`);
    const parts = packMarkdown(lex(paras.join('\n\n')), limits);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join('\n\n')).toBe(paras.join('\n\n'));
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(200);
  });

  it('counts list items and table rows as blocks', () => {
    expect(blockCount(lex('- a\n- b\n- c')[0] as never)).toBe(4);
    expect(blockCount(lex('| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |')[0] as never)).toBe(4);
    const list = Array.from({ length: 30 }, (_, i) => `- item ${i}`).join('\n');
    const parts = packMarkdown(lex(list), { chars: 10_000, blocks: 20, tableColumns: 3 });
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(blockCount(lex(p)[0] as never)).toBeLessThanOrEqual(20);
    expect(parts.join('\n')).toBe(list);
  });

  it('cuts a long code block into fenced pieces that keep the language', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line_${i} = ${i}`).join('\n');
    const parts = packMarkdown(lex(`\`\`\`python\n${code}\n\`\`\``), limits);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p).toMatch(/^```python\n[\s\S]*\n```$/);
      expect(p.length).toBeLessThanOrEqual(200);
    }
    const back = parts.map((p) => (lex(p)[0] as { text: string }).text).join('\n');
    expect(back).toBe(code);
  });

  it('cuts a long table into row groups that repeat the header', () => {
    const rows = Array.from({ length: 30 }, (_, i) => `| r${i} | ${i} |`);
    const table = ['| name | n |', '|---|---|', ...rows].join('\n');
    const parts = packMarkdown(lex(table), limits);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      const tok = lex(p)[0];
      expect(tok?.type).toBe('table');
      expect(p.startsWith('| name | n |\n|---|---|\n')).toBe(true);
    }
  });

  it('draws a table wider than the column limit as a grid in a code block', () => {
    const wide = '| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | 4 |';
    const [part] = packMarkdown(lex(wide), limits);
    expect(lex(part ?? '')[0]?.type).toBe('code');
    expect(part).toContain('a');
  });

  it('shows raw HTML as text', () => {
    const [part] = packMarkdown(lex('<div onclick="x">hi</div>'), limits);
    expect(part).toBe('&lt;div onclick="x">hi&lt;/div>');
  });

  it('gives nothing for empty Markdown', () => {
    expect(packMarkdown(lex('\n\n'), limits)).toEqual([]);
  });
});

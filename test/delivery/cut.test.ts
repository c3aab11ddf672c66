/** The shared cut of one long block of markup: budget kept, best break taken, constructs closed and reopened. */
import { describe, expect, it } from 'vitest';
import { angleMarkup, cutMarkup, type Piece, type Tokenizer, visibleText } from '../../src/delivery/cut.js';

const html = angleMarkup({ tags: true, decode: (e) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>' })[e] ?? e });
const links = angleMarkup({ tags: false });
const shown = (part: string) => visibleText(html(part));

describe('cutMarkup', () => {
  it('returns markup that fits whole, and nothing for markup that shows only whitespace', () => {
    expect(cutMarkup('<b>short</b>', 10, html)).toEqual(['<b>short</b>']);
    expect(cutMarkup('  \n ', 10, html)).toEqual([]);
  });

  it('closes what is open at a cut and reopens it in the next part', () => {
    const parts = cutMarkup('<b>one two <i>three four</i> five</b>', 12, html);
    expect(parts).toEqual(['<b>one two </b>', '<b><i>three four</i> </b>', '<b>five</b>']);
    for (const p of parts) expect(shown(p).length).toBeLessThanOrEqual(12);
  });

  it('cuts after a blank line, else a line, else a space, past a third of the part', () => {
    expect(cutMarkup('aaaa bbbb\ncccc\n\ndddd eeee', 20, html)[0]).toBe('aaaa bbbb\ncccc');
    expect(cutMarkup('aaaa bbbb\ncccc dddd eeee', 20, html)[0]).toBe('aaaa bbbb');
    expect(cutMarkup('aaaa bbbb cccc dddd eeee', 20, html)[0]).toBe('aaaa bbbb cccc dddd ');
    // A break too early would leave a uselessly short part: the budget's end is taken instead.
    expect(cutMarkup(`ab ${'x'.repeat(40)}`, 20, html)[0]).toBe(`ab ${'x'.repeat(17)}`);
  });

  it('drops newlines at a cut, so no part starts or ends blank', () => {
    const parts = cutMarkup(`${'a'.repeat(8)}\n\n\n\n${'b'.repeat(8)}`, 10, html);
    expect(parts).toEqual(['a'.repeat(8), 'b'.repeat(8)]);
  });

  it('never cuts inside an entity or a link while it fits, and counts a link in full when tags are not markup', () => {
    const amp = cutMarkup('&amp;'.repeat(30), 7, html);
    for (const p of amp) expect(p).toMatch(/^(&amp;)+$/);
    expect(amp.map(shown).join('')).toBe('&'.repeat(30));
    const linked = cutMarkup('see <https://e.com/a|a link> and <https://e.com/b|b>', 30, links);
    expect(linked).toEqual(['see <https://e.com/a|a link> ', 'and <https://e.com/b|b>']);
    for (const p of linked) expect(p.length).toBeLessThanOrEqual(30);
  });

  it('cuts an atomic piece wider than a whole part like text, and still moves on', () => {
    const long = `<${'x'.repeat(50)}>`;
    const parts = cutMarkup(long, 20, links);
    expect(parts.join('')).toBe(long);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(20);
  });

  it('never splits a surrogate pair, and measures it as two units', () => {
    const text = '😀'.repeat(25);
    const parts = cutMarkup(text, 9, html);
    expect(parts.join('')).toBe(text);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(9);
      expect(p).toMatch(/^(😀)+$/u);
    }
    // Text holding such pairs is walked character by character, with the same breaks.
    expect(cutMarkup('ab😀 '.repeat(10), 12, html)[0]).toBe('ab😀 ab😀 ');
    expect(cutMarkup('ab😀\n'.repeat(10), 12, html)[0]).toBe('ab😀\nab😀');
  });

  it('uses the closer a construct declares (a code fence), which takes no units of the budget', () => {
    const fence: Tokenizer = (s) =>
      [
        { kind: 'open', name: 'fence', raw: '```\n', closer: '\n```' },
        ...links(s),
        { kind: 'close', name: 'fence', raw: '\n```' },
      ] satisfies Piece[];
    const body = Array.from({ length: 12 }, (_, i) => `line ${i}`).join('\n');
    const parts = cutMarkup(body, 30, fence);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(p.startsWith('```\n') && p.endsWith('\n```')).toBe(true);
      expect(p.length - 8).toBeLessThanOrEqual(30);
    }
    expect(parts.map((p) => p.slice(4, -4)).join('\n')).toBe(body);
  });

  it('keeps every character of random markup, within the budget, balanced', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const bits = ['word ', 'more words ', '\n', '\n\n', '&amp;', '&lt;', '😀', 'x'];
    for (let round = 0; round < 50; round++) {
      let text = '';
      for (let i = 0; i < 200; i++) text += bits[Math.floor(next() * bits.length)];
      const markup = `<b>${text}</b>`;
      const limit = 15 + Math.floor(next() * 100);
      const parts = cutMarkup(markup, limit, html);
      for (const p of parts) {
        expect(shown(p).length).toBeLessThanOrEqual(limit);
        expect(p.startsWith('<b>') && p.endsWith('</b>')).toBe(true);
      }
      expect(parts.map(shown).join('').replace(/\s+/g, '')).toBe(shown(markup).replace(/\s+/g, ''));
    }
  });
});

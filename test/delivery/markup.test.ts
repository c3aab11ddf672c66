/** The shared Markdown walker: structure handled once, a dialect asked only for its spelling. */
import { marked, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import {
  type Dialect,
  gridText,
  lineGrid,
  listMarker,
  type ListMarker,
  plainText,
  prefixLines,
  renderBlocks,
} from '../../src/delivery/markup.js';

/** A dialect that spells every construct visibly, so a test sees what the walker asked for. */
const markers: ListMarker[] = [];
const probe: Dialect = {
  escape: (t) => t.replace(/[<>&]/g, (c) => `{${c}}`),
  strong: (i) => `[b:${i}]`,
  em: (i) => `[i:${i}]`,
  del: (i) => `[s:${i}]`,
  heading: (i) => `[h:${i}]`,
  codespan: (c) => `[c:${c}]`,
  link: (href, label) => `[a ${href}:${label}]`,
  untitledImage: 'picture',
  code: (text, language) => `[pre ${language || '-'}:${text}]`,
  table: (rows, align) => `[table ${align.map((a) => a ?? '-').join(',')}\n${gridText(rows, align)}]`,
  quote: (blocks, nested) => `[q${nested ? ' nested' : ''}:${blocks.join('|')}]`,
  quoteKeepsDepth: true,
  htmlBlock: (t) => `[html:${t.trim()}]`,
  hr: '[hr]',
  list: {
    indent: '..',
    marker: (m) => {
      markers.push(m);
      return m.checked !== undefined ? (m.checked ? '[x]' : '[ ]') : m.ordered ? `${m.number})` : '*';
    },
    continuation: (depth) => `${'..'.repeat(depth)}+`,
    nestedOnOwnLine: true,
  },
};

const render = (md: string, d: Dialect = probe) => renderBlocks(d, marked.lexer(md, { gfm: true }));
const texts = (md: string, d: Dialect = probe) => render(md, d).map((b) => b.text);

describe('renderBlocks', () => {
  it('renders one block per top-level Markdown block, dropping empty ones', () => {
    expect(texts('# Head *x*\n\npara **b** ~~s~~ `c<`\n\n---\n\n[ref]: https://r.org')).toEqual([
      '[h:Head [i:x]]',
      'para [b:b] [s:s] [c:c<]',
      '[hr]',
    ]);
  });

  it('escapes every text node and shows raw HTML as escaped text', () => {
    expect(texts('a < b & <span>c</span>')).toEqual(['a {<} b {&} {<}span{>}c{<}/span{>}']);
    expect(texts('<div>\nraw\n</div>')).toEqual(['[html:<div>\nraw\n</div>]']);
  });

  it('passes links with their rendered label and images with their alt text to the dialect', () => {
    expect(
      texts('[**x** y](https://e.com) ![alt *t*](https://e.com/i.png) ![](https://e.com/j.png) <https://auto.org>'),
    ).toEqual([
      '[a https://e.com:[b:x] y] [a https://e.com/i.png:alt *t*] [a https://e.com/j.png:picture] [a https://auto.org:https://auto.org]',
    ]);
  });

  it('marks code blocks and tables as code, with the first word of the language', () => {
    const out = render('```ts title="a"\nlet a = 1 < 2;\n```\n\n    indented\n\n| a | b |\n|:-|-:|\n| **x** | `y` |');
    expect(out).toEqual([
      { kind: 'code', text: '[pre ts:let a = 1 < 2;]' },
      { kind: 'code', text: '[pre -:indented]' },
      { kind: 'code', text: '[table left,right\na | b\n--+--\nx | y]' },
    ]);
  });

  it('lays out nested, ordered and task lists with the dialect’s markers and indentation', () => {
    markers.length = 0;
    expect(texts('3. c\n4. d\n   - e\n     - [x] f\n     - [ ] g')).toEqual([
      '3) c\n4) d\n..* e\n....[x] f\n....[ ] g',
    ]);
    expect(markers.map((m) => [m.ordered, m.number, m.depth, m.checked])).toEqual([
      [true, 3, 0, undefined],
      [true, 4, 0, undefined],
      [false, 1, 1, undefined],
      [false, 1, 2, true],
      [false, 2, 2, false],
    ]);
  });

  it('puts an item’s later blocks after the continuation, and a first nested list on its own line or not', () => {
    expect(texts('- a\n\n  second\n- b')).toEqual(['* a\n+second\n* b']);
    const inline: Dialect = { ...probe, list: { ...probe.list, nestedOnOwnLine: false } };
    expect(texts('- - x', probe)).toEqual(['* \n..* x']);
    expect(texts('- - x', inline)).toEqual(['* ..* x']);
  });

  it('tells a quote whether it is nested, and keeps or resets the list depth inside it', () => {
    expect(texts('> a\n>\n> > b')).toEqual(['[q:a|[q nested:b]]']);
    expect(texts('- x\n  > - y')).toEqual(['* x\n+[q:..* y]']);
    expect(texts('- x\n  > - y', { ...probe, quoteKeepsDepth: false })).toEqual(['* x\n+[q:* y]']);
  });

  it('renders broken Markdown (a reply still streaming in) without losing text', () => {
    expect(texts('**unclosed bold and `code\n\n```py\nprint(1)')).toEqual([
      '**unclosed bold and `code',
      '[pre py:print(1)]',
    ]);
    // A link cut off mid-address is text with the address autolinked; no character is lost.
    expect(texts('[half a link](https://e.')).toEqual(['[half a link]([a https://e:https://e].']);
    expect(texts('| a |\n|---|\n| b | extra |')).toEqual(['[table -\na\n-\nb]']);
  });

  it('renders the same tokens the same way on every call (no state kept between renders)', () => {
    const tokens = marked.lexer('- a\n\n> q\n\n| x |\n|---|\n| y |', { gfm: true });
    expect(renderBlocks(probe, tokens)).toEqual(renderBlocks(probe, tokens));
  });
});

describe('plainText and gridText', () => {
  it('plainText drops markup, keeps code text, turns line breaks into spaces', () => {
    const para = marked.lexer('**b** _i_ `c*` [l](https://x) ![img](https://y) a  \nb', {
      gfm: true,
    })[0] as Tokens.Paragraph;
    expect(plainText(para.tokens)).toBe('b i c* l img a b');
  });

  it('gridText pads, aligns and caps columns', () => {
    expect(
      gridText([
        ['n', 'v'],
        ['alpha', '1'],
        ['b', '22'],
      ]),
    ).toBe('n     | v\n------+---\nalpha | 1\nb     | 22');
    expect(
      gridText(
        [
          ['n', 'v'],
          ['a', '1'],
          ['bb', '22'],
        ],
        [null, 'right'],
      ),
    ).toBe('n  |  v\n---+---\na  |  1\nbb | 22');
    expect(
      gridText(
        [
          ['x', 'y'],
          ['abc', 'z'],
        ],
        ['center', 'left'],
      ),
    ).toBe(' x  | y\n----+--\nabc | z');
    expect(gridText([['h'], ['a'.repeat(10)]], undefined, 4)).toBe('h\n----\naaaaaaaaaa');
  });
});

describe('lineGrid and prefixLines', () => {
  it('lineGrid lays out one-line cells: line breaks become spaces, after the dialect cleans a cell', () => {
    expect(
      lineGrid(
        [
          ['h', 'v'],
          ['a\nb', '1'],
        ],
        [null, 'right'],
      ),
    ).toBe('h   | v\n----+--\na b | 1');
    expect(lineGrid([['H'], ['x\ny']], undefined, (c) => c.toLowerCase())).toBe('h\n---\nx y');
  });

  it('prefixLines puts the prefix before every line, a blank line between blocks', () => {
    expect(prefixLines(['one\ntwo', 'three'], '> ')).toBe('> one\n> two\n> \n> three');
    expect(prefixLines([], '> ')).toBe('> ');
  });
});

describe('listMarker', () => {
  const item = (over: Partial<ListMarker>): ListMarker => ({ ordered: false, number: 1, depth: 0, ...over });

  it('numbers ordered items with the dot, bullets the others by depth, and puts a task box instead', () => {
    const plain = listMarker({ boxes: ['[x]', '[ ]'] });
    expect([item({}), item({ depth: 3 }), item({ ordered: true, number: 7 })].map(plain)).toEqual(['•', '•', '7.']);
    expect([item({ checked: true }), item({ checked: false })].map(plain)).toEqual(['[x]', '[ ]']);
    expect(listMarker({ boxes: ['y', 'n'], dot: '\\.' })(item({ ordered: true, number: 2 }))).toBe('2\\.');
  });

  it('alternates bullets by depth and keeps the bullet before the box where the style asks', () => {
    const slack = listMarker({ boxes: ['☑', '☐'], bullets: ['•', '◦'], boxAfterBullet: true });
    expect([0, 1, 2].map((depth) => slack(item({ depth })))).toEqual(['•', '◦', '•']);
    expect(slack(item({ depth: 1, checked: true }))).toBe('◦ ☑');
    expect(slack(item({ ordered: true, number: 3, checked: false }))).toBe('3. ☐');
  });
});

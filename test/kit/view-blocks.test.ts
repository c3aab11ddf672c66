import { describe, expect, it } from 'vitest';
import { type BlockMarks, renderViewBlock, type ViewBlock } from '../../src/kit/index.js';

/** Marks that name each kind, so the walk's choice shows in the output. */
const marks: BlockMarks = {
  spans: (s) =>
    s.map((x) => (typeof x === 'string' ? x : 'strong' in x ? `*${x.strong}*` : JSON.stringify(x))).join(''),
  code: (t) => `code(${t})`,
  quote: (t, label) => `quote(${label ?? '-'}: ${t})`,
  hint: (s) => `hint(${marks.spans(s)})`,
};

describe('renderViewBlock', () => {
  it('writes each kind of block with the channel’s mark for it', () => {
    const blocks: ViewBlock[] = [
      { kind: 'heading', icon: '🔧', spans: ['run ', { strong: 'ls' }] },
      { kind: 'text', spans: ['plain'] },
      { kind: 'code', text: 'a < b' },
      { kind: 'quote', label: 'Note', text: 'why' },
      { kind: 'quote', text: 'no label' },
      { kind: 'hint', spans: ['tap a button'] },
    ];
    expect(blocks.map((b) => renderViewBlock(b, marks))).toEqual([
      '🔧 run *ls*',
      'plain',
      'code(a < b)',
      'quote(Note: why)',
      'quote(-: no label)',
      'hint(tap a button)',
    ]);
  });

  it('writes a heading’s icon through `icon` when the channel gives one', () => {
    const heading: ViewBlock = { kind: 'heading', icon: '<!>', spans: ['x'] };
    expect(renderViewBlock(heading, { ...marks, icon: (i) => i.replace(/</g, '&lt;') })).toBe('&lt;!> x');
  });
});

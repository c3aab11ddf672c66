/** The packer's markup for fenced dialects (Slack, Discord): code cut with its fence reopened, text clipped whole. */
import { describe, expect, it } from 'vitest';
import { angleMarkup } from '../../src/delivery/cut.js';
import { clipCut, cutFenced, fencedMarkup } from '../../src/delivery/fenced-markup.js';

const links = angleMarkup({ tags: false });

describe('fenced markup', () => {
  it('cutFenced re-opens the fence on every part, within the limit fences included', () => {
    const fenced = '```\n' + 'line\n'.repeat(100) + 'end\n```';
    const parts = cutFenced(fenced, 120, links);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(120);
      expect(p.startsWith('```\n') && p.endsWith('\n```')).toBe(true);
    }
    expect(parts.map((p) => p.slice(4, -4)).join('\n')).toBe(fenced.slice(4, -4));
  });

  it('keeps the language on every part, and a fixed reserve leaves that much room', () => {
    const fenced = '```typescript\n' + 'const x = 1;\n'.repeat(40) + '```';
    const parts = cutFenced(fenced, 100, links, 40);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.startsWith('```typescript\n')).toBe(true);
      expect(p.length).toBeLessThanOrEqual(100 - 40 + '```typescript\n'.length + 4);
    }
  });

  it('clipCut ends in an ellipsis within max and never cuts inside a link', () => {
    expect(clipCut('short', 10, links)).toBe('short');
    const clipped = clipCut(`see ${'<https://example.com/a|a link> '.repeat(5)}`, 50, links);
    expect(clipped.length).toBeLessThanOrEqual(50);
    expect(clipped.endsWith('…')).toBe(true);
    expect((clipped.match(/</g) ?? []).length).toBe((clipped.match(/>/g) ?? []).length);
  });

  it('packs blocks whole while they fit and cuts text without trailing whitespace', () => {
    const markup = fencedMarkup(links);
    expect(markup.join({ kind: 'text', text: 'a' }, { kind: 'text', text: 'b' })).toEqual({
      kind: 'text',
      text: 'a\n\nb',
    });
    const cut = markup.cut({ kind: 'text', text: 'word '.repeat(30) }, 40);
    expect(cut.length).toBeGreaterThan(1);
    for (const c of cut) expect(c).toEqual({ kind: 'text', text: c.text.trimEnd() });
    expect(
      markup.cut({ kind: 'code', text: '```\n' + 'x\n'.repeat(50) + '```' }, 30).every((c) => c.kind === 'code'),
    ).toBe(true);
  });
});

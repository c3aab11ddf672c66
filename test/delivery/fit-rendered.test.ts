/** `fitRendered`: a rendering that grows its text (escapes, fences) is kept within its limit. */
import { describe, expect, it } from 'vitest';
import { fitRendered } from '../../src/delivery/views.js';

const bracketed = (t: string) => `[${t.replace(/&/g, '&amp;')}]`;

describe('fitRendered', () => {
  it('returns the rendering as it is when it fits', () => {
    expect(fitRendered('a & b', 20, bracketed)).toBe('[a &amp; b]');
  });

  it('cuts the text and marks the cut until its rendering fits, however much escaping grew it', () => {
    const out = fitRendered('&'.repeat(100), 50, bracketed);
    expect(out.length).toBeLessThanOrEqual(50);
    expect(out.endsWith('…]')).toBe(true);
  });
});

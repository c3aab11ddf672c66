/** The packer measures each block once when the markup says a join measures the sum. */
import { describe, expect, it } from 'vitest';
import { type Markup, packBlocks } from '../../src/delivery/split.js';

function counted(separatorUnits?: number): { markup: Markup<string>; measured: string[] } {
  const measured: string[] = [];
  const markup: Markup<string> = {
    measure: (b) => {
      measured.push(b);
      return b.length;
    },
    join: (a, b) => (a ? `${a}\n\n${b}` : b),
    cut: (b, limit) => b.match(new RegExp(`[^]{1,${limit}}`, 'g')) ?? [],
    ...(separatorUnits === undefined ? {} : { separatorUnits }),
  };
  return { markup, measured };
}

describe('packBlocks with separatorUnits', () => {
  const blocks = ['', 'alpha', 'beta', 'x'.repeat(25), 'gamma', '', 'delta', 'epsilon'];

  it('packs exactly as measuring every join would', () => {
    for (const limit of [6, 10, 12, 20, 40]) {
      expect(packBlocks(blocks, limit, counted(2).markup)).toEqual(packBlocks(blocks, limit, counted().markup));
    }
  });

  it('measures blocks, never the growing joins', () => {
    const { markup, measured } = counted(2);
    packBlocks(blocks, 40, markup);
    expect(measured.filter((m) => m.includes('\n\n'))).toEqual([]);
    const { markup: slow, measured: all } = counted();
    packBlocks(blocks, 40, slow);
    expect(all.some((m) => m.includes('\n\n'))).toBe(true);
  });
});

/** The kit's holder of a channel's core (`kit/core-holder.ts`): refused before `start(core)`, handed out after. */
import { describe, expect, it } from 'vitest';
import { type ChannelCore, CoreHolder } from '../../src/kit/index.js';

describe('CoreHolder', () => {
  it('refuses the core before the start, naming the channel; hands it out after', () => {
    const held = new CoreHolder('example');
    expect(() => held.get()).toThrow(expect.objectContaining({ code: 'channel_not_started' }));
    expect(() => held.get()).toThrow('example: channel used before start()');
    const core = { names: { nameOf: (p: string | null | undefined) => `name of ${p}` } } as unknown as ChannelCore;
    held.set(core);
    expect(held.get()).toBe(core);
  });

  it("names a principal through the core's directory once started, by the principal itself before", () => {
    const held = new CoreHolder('example');
    expect(held.nameOf('example:42')).toBe('example:42');
    expect(held.nameOf(undefined)).toBe('someone');
    held.set({ names: { nameOf: (p: string | null | undefined) => `name of ${p}` } } as unknown as ChannelCore);
    expect(held.nameOf('example:42')).toBe('name of example:42');
  });
});

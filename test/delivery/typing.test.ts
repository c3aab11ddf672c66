import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Surface } from '../../src/contract/surface.js';
import { TYPING_DELAY_MS, TypingIndicators } from '../../src/delivery/typing.js';
import type { Conversation } from '../../src/store/schema.js';

const conv = (id: string) => ({ id, chat_key: `chat-${id}`, thread_key: '' }) as unknown as Conversation;

/** The typing side of a surface: its calls recorded with the time they happened. */
class TypingSurface implements Pick<Surface<string>, 'address' | 'typing' | 'typingRefreshMs'> {
  readonly seen: Array<{ at: number; address: string; on: boolean }> = [];
  constructor(
    readonly typingRefreshMs?: number,
    private readonly addressDelayMs = 0,
  ) {}
  async address(c: Conversation): Promise<string> {
    if (this.addressDelayMs) await new Promise((r) => setTimeout(r, this.addressDelayMs));
    return c.chat_key;
  }
  typing(address: string, on: boolean): void {
    this.seen.push({ at: Date.now(), address, on });
  }
}

describe('typing indicators (one keep-alive for every surface)', () => {
  let typing: TypingIndicators;
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    typing = new TypingIndicators(pino({ level: 'silent' }));
  });
  afterEach(() => {
    typing.close();
    vi.useRealTimers();
  });

  it('shows after the delay, again every refresh interval the surface declares, and stops at off', async () => {
    const surface = new TypingSurface(4_000);
    typing.soon(conv('a'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(TYPING_DELAY_MS - 1);
    expect(surface.seen).toEqual([]);
    typing.soon(conv('a'), surface as unknown as Surface); // the next tool: no second timer
    await vi.advanceTimersByTimeAsync(1 + 4_000 * 3);
    expect(surface.seen.map((s) => [s.at, s.on])).toEqual([
      [1_000, true],
      [5_000, true],
      [9_000, true],
      [13_000, true],
    ]);
    typing.off(conv('a'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(surface.seen.slice(4)).toEqual([{ at: 13_000, address: 'chat-a', on: false }]);
  });

  it('a surface without a refresh interval is told once on and once off', async () => {
    const surface = new TypingSurface();
    typing.soon(conv('b'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(30_000);
    typing.off(conv('b'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(1);
    expect(surface.seen.map((s) => s.on)).toEqual([true, false]);
  });

  it('an answer within the delay shows nothing, not even an off', async () => {
    const surface = new TypingSurface(4_000);
    typing.soon(conv('c'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(TYPING_DELAY_MS - 10);
    typing.off(conv('c'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(surface.seen).toEqual([]);
  });

  it('turned off while the address is looked up: nothing is shown and no refresh is left running', async () => {
    const surface = new TypingSurface(4_000, 500);
    typing.soon(conv('d'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(TYPING_DELAY_MS + 100);
    typing.off(conv('d'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(surface.seen.map((s) => s.on)).toEqual([false]);
  });

  it('close stops every keep-alive', async () => {
    const surface = new TypingSurface(4_000);
    typing.soon(conv('e'), surface as unknown as Surface);
    typing.soon(conv('f'), surface as unknown as Surface);
    await vi.advanceTimersByTimeAsync(TYPING_DELAY_MS);
    expect(surface.seen).toHaveLength(2);
    typing.close();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(surface.seen).toHaveLength(2);
  });
});

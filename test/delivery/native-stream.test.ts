/**
 * The presenter's native streams (`delivery/native-stream.ts`) over a recording surface: what is
 * appended, when a stream rolls over, and when the messages must be edited instead.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { NativeStreams, Surface } from '../../src/contract/surface.js';
import { advanceStream, isStreamRef, leaveStreams, streamsNatively } from '../../src/delivery/native-stream.js';
import type { SentRef } from '../../src/delivery/render.js';

/** A surface whose streams keep each message's text; `ended` streams answer false. */
function recording(options: { maxChars?: number; rolloverMs?: number; refuse?: boolean } = {}) {
  const texts = new Map<string, string>();
  const open = new Set<string>();
  const calls: string[] = [];
  let n = 0;
  const streams: NativeStreams<unknown> = {
    maxChars: options.maxChars ?? 1000,
    rolloverMs: options.rolloverMs ?? 60_000,
    available: () => !options.refuse,
    async start(_a, markdown) {
      calls.push(`start:${markdown}`);
      if (options.refuse) return null;
      const ref = `m${++n}`;
      texts.set(ref, markdown);
      open.add(ref);
      return ref;
    },
    async append(_a, ref, markdown) {
      calls.push(`append:${ref}:${markdown}`);
      if (!open.has(ref)) return false;
      texts.set(ref, (texts.get(ref) ?? '') + markdown);
      return true;
    },
    async stop(_a, ref, markdown) {
      calls.push(`stop:${ref}:${markdown ?? ''}`);
      if (!open.has(ref)) return false;
      open.delete(ref);
      texts.set(ref, (texts.get(ref) ?? '') + (markdown ?? ''));
      return true;
    },
  };
  const surface = { streams } as unknown as Surface;
  return { surface, texts, open, calls };
}

describe('native streams', () => {
  it('appends what is new, saves after every call, and stops with the rest of the final text', async () => {
    const r = recording();
    const refs: SentRef[] = [];
    let saves = 0;
    const save = async () => {
      saves++;
    };
    const go = (text: string, final = false) =>
      advanceStream({ surface: r.surface, address: null, refs, text, final, save });
    expect(streamsNatively(r.surface, null, refs)).toBe(true);
    expect(await go('Hello')).toBe('ok');
    expect(await go('Hello, wor')).toBe('ok');
    expect(await go('Hello, wor')).toBe('ok');
    expect(await go('Hello, world.', true)).toBe('ok');
    expect(r.calls).toEqual(['start:Hello', 'append:m1:, wor', 'stop:m1:ld.']);
    expect(saves).toBe(3);
    expect(r.texts.get('m1')).toBe('Hello, world.');
    expect(r.open.size).toBe(0);
    expect(refs.every(isStreamRef)).toBe(true);
  });

  it('rolls over to a new message when one is full or old; the messages hold the text back to back', async () => {
    const r = recording({ maxChars: 10, rolloverMs: 1_000 });
    const refs: SentRef[] = [];
    let now = 0;
    const go = (text: string, final = false) =>
      advanceStream({ surface: r.surface, address: null, refs, text, final, save: async () => {}, now: () => now });
    const text = 'abcdefghijklmnopqrstuvwxyz';
    await go(text.slice(0, 4));
    await go(text.slice(0, 23));
    now = 5_000; // the third message is old: the rest goes in a fourth
    await go(text, true);
    const order = refs.map((x) => x.ref);
    expect(order).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(order.map((ref) => r.texts.get(ref)).join('')).toBe(text);
    expect(order.map((ref) => r.texts.get(ref)?.length)).toEqual([10, 10, 3, 3]);
    expect(r.open.size).toBe(0);
  });

  it('a text that no longer begins with what is shown falls back; a shorter one waits until final', async () => {
    const r = recording();
    const refs: SentRef[] = [];
    const go = (text: string, final = false) =>
      advanceStream({ surface: r.surface, address: null, refs, text, final, save: async () => {} });
    await go('The first answer');
    // A re-run after a crash streams again from the start: it waits while it is shorter.
    expect(await go('The fi')).toBe('ok');
    expect(await go('The first answer, again')).toBe('ok');
    expect(r.texts.get('m1')).toBe('The first answer, again');
    expect(await go('A different answer, longer than the first')).toBe('fallback');
    expect(await go('The', true)).toBe('fallback');
    await leaveStreams(r.surface, null, refs, pino({ level: 'silent' }));
    expect(refs).toEqual([{ ref: 'm1', shown: '' }]);
    expect(r.open.size).toBe(0);
    expect(streamsNatively(r.surface, null, refs)).toBe(false);
  });

  it('an expired stream or a refused start falls back', async () => {
    const r = recording();
    const refs: SentRef[] = [];
    const go = (text: string) =>
      advanceStream({ surface: r.surface, address: null, refs, text, final: false, save: async () => {} });
    await go('one');
    r.open.clear();
    expect(await go('one two')).toBe('fallback');
    const refused = recording({ refuse: true });
    expect(streamsNatively(refused.surface, null, [])).toBe(false);
    expect(
      await advanceStream({
        surface: refused.surface,
        address: null,
        refs: [],
        text: 'x',
        final: false,
        save: async () => {},
      }),
    ).toBe('fallback');
  });

  it('never cuts a surrogate pair at a message boundary', async () => {
    const r = recording({ maxChars: 4 });
    const refs: SentRef[] = [];
    const text = 'abc😀def';
    await advanceStream({ surface: r.surface, address: null, refs, text, final: true, save: async () => {} });
    const parts = refs.map((x) => r.texts.get(x.ref) ?? '');
    expect(parts.join('')).toBe(text);
    expect(parts[0]).toBe('abc');
  });
});

import { describe, expect, it } from 'vitest';
import { buildHistory, toBlocks } from '../../src/core/history.js';
import { rememberingCounts } from '../../src/core/tokens.js';
import type { Message } from '../../src/store/schema.js';

let id = 0;
const msg = (turn: string, role: Message['role'], content: string | null, extra: Partial<Message> = {}): Message => ({
  id: ++id,
  conversation_id: 'c',
  turn_id: turn,
  role,
  content,
  tool_calls: null,
  tool_call_id: null,
  author_id: null,
  created_at: 0,
  ...extra,
});

describe('history budget', () => {
  const big = 'x'.repeat(4000); // ≈ 1000 tokens
  const log: Message[] = [
    msg('t1', 'user', big),
    msg('t1', 'assistant', 'a1'),
    msg('t2', 'user', 'question two'),
    msg('t2', 'assistant', null, { tool_calls: JSON.stringify([{ id: 'c1', name: 'echo', arguments: '{}' }]) }),
    msg('t2', 'tool', big, { tool_call_id: 'c1' }),
    msg('t2', 'assistant', 'a2'),
    msg('t3', 'user', 'now'),
  ];

  it('keeps everything when it fits', () => {
    const h = buildHistory(log, 'sys', 100_000, 't3');
    expect(h.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });

  it('drops the oldest turns first and never splits a tool call from its result', () => {
    const h = buildHistory(log, 'sys', 1500, 't3');
    expect(h.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const small = buildHistory(log, 'sys', 200, 't3');
    expect(small.map((m) => m.role)).toEqual(['system', 'user']);
    expect(small.at(-1)).toEqual({ role: 'user', content: 'now' });
  });

  it('supplies a result for a call whose result was never recorded', () => {
    const broken = [
      msg('t9', 'user', 'hi'),
      msg('t9', 'assistant', null, { tool_calls: JSON.stringify([{ id: 'z', name: 'echo', arguments: '{}' }]) }),
    ];
    const h = buildHistory(broken, 'sys', 10_000, 't9');
    expect(h.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'z' });
  });
});

describe('a current turn larger than the budget', () => {
  const big = 'y'.repeat(4000); // ≈ 1000 tokens
  const call = (id: string) => JSON.stringify([{ id, name: 'echo', arguments: '{}' }]);
  const log: Message[] = [
    msg('old', 'user', 'earlier'),
    msg('old', 'assistant', 'earlier answer'),
    msg('cur', 'user', big),
    msg('cur', 'assistant', null, { tool_calls: call('k1') }),
    msg('cur', 'tool', big, { tool_call_id: 'k1' }),
    msg('cur', 'assistant', null, { tool_calls: call('k2') }),
    msg('cur', 'tool', 'short result', { tool_call_id: 'k2' }),
  ];

  it('keeps its newest blocks that fit and never starts with an assistant block when more than one is kept', () => {
    // Room for the last two blocks (a call and its result each) but not for the user message: the
    // first of them would open the history with an assistant message, so only the last stays.
    const h = buildHistory(log, 'sys', 1100, 'cur');
    expect(h.map((m) => m.role)).toEqual(['system', 'assistant', 'tool']);
    expect(h.at(-1)).toMatchObject({ toolCallId: 'k2', content: 'short result' });
    // Room for everything of the current turn: the older turn does not fit and goes.
    const whole = buildHistory(log, 'sys', 2060, 'cur');
    expect(whole.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    // No room even for the last block: it stays all the same.
    expect(buildHistory(log, 'sys', 10, 'cur').map((m) => m.role)).toEqual(['system', 'assistant', 'tool']);
  });
});

describe('blocks made from the log', () => {
  it('are made once per row for rows that stand alone, read only, and per counter', () => {
    const log: Message[] = [msg('t1', 'user', 'hello'), msg('t1', 'assistant', 'hi there'), msg('t2', 'user', 'more')];
    const first = toBlocks(log);
    const again = toBlocks([...log, msg('t2', 'assistant', 'sure')]);
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
    expect(again).toHaveLength(4);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(Object.isFrozen(first[0]?.messages[0])).toBe(true);
    expect(first.map((b) => b.messages[0])).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
      { role: 'user', content: 'more' },
    ]);
    // Another counter counts for itself.
    const doubled = toBlocks(log, (t) => 2 * t.length);
    expect(doubled[0]).not.toBe(first[0]);
    expect(doubled[0]?.tokens).toBe(2 * 'hello'.length + 4);
  });
});

describe('remembered token counts', () => {
  it('counts a long text once, a short one each time, and keeps a bounded number of texts', () => {
    let calls = 0;
    const count = rememberingCounts((t) => {
      calls++;
      return t.length;
    });
    const long = 'z'.repeat(1000);
    expect(count(long)).toBe(1000);
    expect(count(`${'z'.repeat(999)}z`)).toBe(1000);
    expect(calls).toBe(1);
    expect(count('short')).toBe(5);
    expect(count('short')).toBe(5);
    expect(calls).toBe(3);
    // 64 other long texts push the first one out.
    for (let i = 0; i < 64; i++) count(`${long}${i}`);
    calls = 0;
    count(long);
    expect(calls).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { buildHistory } from '../../src/core/history.js';
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
    expect(h.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('drops the oldest turns first and never splits a tool call from its result', () => {
    const h = buildHistory(log, 'sys', 1500, 't3');
    expect(h.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const small = buildHistory(log, 'sys', 200, 't3');
    expect(small.map((m) => m.role)).toEqual(['system', 'user']);
    expect(small.at(-1)).toEqual({ role: 'user', content: 'now' });
  });

  it('supplies a result for a call whose result was never recorded', () => {
    const broken = [msg('t9', 'user', 'hi'), msg('t9', 'assistant', null, { tool_calls: JSON.stringify([{ id: 'z', name: 'echo', arguments: '{}' }]) })];
    const h = buildHistory(broken, 'sys', 10_000, 't9');
    expect(h.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'z' });
  });
});

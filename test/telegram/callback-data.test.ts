import { describe, expect, it } from 'vitest';
import { decodeCallback, encodeCallback } from '../../src/channels/telegram/callback-data.js';
import { keyboardOf, TELEGRAM_CARD_LIMITS } from '../../src/channels/telegram/cards.js';
import { approvalView, questionView } from '../../src/delivery/cards.js';

const approvalKeyboard = (id: string) =>
  keyboardOf(
    approvalView(
      {
        type: 'approval',
        id,
        label: 'bash ls',
        preview: '',
        requester: 'telegram:1',
        state: 'pending',
        scope: null,
        by: null,
        note: null,
      },
      TELEGRAM_CARD_LIMITS,
    ).buttons,
  );
const questionKeyboard = (id: string, answers: string[]) =>
  keyboardOf(
    questionView(
      { type: 'question', id, question: 'Which?', answers, state: 'pending', answer: null, by: null },
      TELEGRAM_CARD_LIMITS,
    ).buttons,
  );

describe('callback data', () => {
  it('round-trips every approval choice, questions and pairing', () => {
    for (const choice of ['once', 'deny', 'session', 'always', 'no_note'] as const) {
      const data = encodeCallback({ kind: 'approval', id: 'apr_0123456789abcdef', choice });
      expect(decodeCallback(data)).toEqual({ kind: 'approval', id: 'apr_0123456789abcdef', choice });
    }
    expect(decodeCallback(encodeCallback({ kind: 'question', id: 'q1', index: 3 }))).toEqual({
      kind: 'question',
      id: 'q1',
      index: 3,
    });
    expect(decodeCallback(encodeCallback({ kind: 'pairing', code: 'ABC234' }))).toEqual({
      kind: 'pairing',
      code: 'ABC234',
    });
  });

  it('keeps a UUID approval id under 64 bytes on every button', () => {
    const id = '7f6c1e0a-3b2d-4c5e-8f9a-0b1c2d3e4f5a';
    const kb = approvalKeyboard(id);
    const datas = kb.inline_keyboard.flat().map((b) => (b as { callback_data: string }).callback_data);
    expect(datas).toHaveLength(4);
    for (const d of datas) expect(Buffer.byteLength(d)).toBeLessThanOrEqual(64);
  });

  it('refuses data over 64 bytes and ids containing a colon', () => {
    expect(() => encodeCallback({ kind: 'approval', id: 'x'.repeat(70), choice: 'once' })).toThrow(/64/);
    expect(() => encodeCallback({ kind: 'question', id: 'a:b', index: 0 })).toThrow(/':'/);
  });

  it('decodes foreign or malformed data to null', () => {
    for (const d of [undefined, '', 'a:x', 'a:x:z', 'q:x:abc', 'zz:1', 'a::y']) expect(decodeCallback(d)).toBeNull();
  });

  it('gives one button per suggested answer', () => {
    const kb = questionKeyboard('q9', ['red', 'green', 'a very long answer '.repeat(10)]);
    const buttons = kb.inline_keyboard.flat();
    expect(buttons.map((b) => (b as { callback_data: string }).callback_data)).toEqual(['q:q9:0', 'q:q9:1', 'q:q9:2']);
    expect(buttons[2]?.text.length).toBeLessThanOrEqual(60);
  });
});

import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/errors.js';
import { classifyByCodes, classifyOwn, RenderAgain } from '../../src/kit/failures.js';
import { StepMessageGone } from '../../src/kit/step-messages.js';

describe('classifyByCodes', () => {
  const codes = { gone: new Set(['message_not_found', 10008]), transient: new Set(['internal_error']) };

  it('a gone code is gone, a transient one transient, any other permanent — with the reason given', () => {
    expect(classifyByCodes(codes, 'message_not_found', 'r1')).toEqual({ kind: 'gone', reason: 'r1' });
    expect(classifyByCodes(codes, 10008, 'r2')).toEqual({ kind: 'gone', reason: 'r2' });
    expect(classifyByCodes(codes, 'internal_error', 'r3')).toEqual({ kind: 'transient', reason: 'r3' });
    expect(classifyByCodes(codes, 'channel_not_found', 'r4')).toEqual({ kind: 'permanent', reason: 'r4' });
  });

  it('without transient codes, whatever is not gone is permanent', () => {
    expect(classifyByCodes({ gone: new Set([1]) }, 2, 'r')).toEqual({ kind: 'permanent', reason: 'r' });
  });
});

describe('classifyOwn', () => {
  it("the program's own failures: a step message gone, a rendering to make again, a refusal", () => {
    expect(classifyOwn(new StepMessageGone('steps'))).toEqual({ kind: 'gone', reason: 'steps' });
    expect(classifyOwn(new RenderAgain('again'))).toEqual({ kind: 'transient', reason: 'again', retryAfterMs: 0 });
    expect(classifyOwn(new SwitchboardError('file_too_big', 'too big'))).toEqual({
      kind: 'permanent',
      reason: 'too big',
    });
  });

  it('anything else is transient, unanswered only when the caller says a post may have landed', () => {
    expect(classifyOwn(new Error('socket hang up'))).toEqual({ kind: 'transient', reason: 'socket hang up' });
    expect(classifyOwn('odd', true)).toEqual({ kind: 'transient', reason: 'odd', unanswered: true });
  });
});

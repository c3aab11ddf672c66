/** The kit's glue around `core.command` (`kit/command-answer.ts`): a failure still answers, an answer as an emitter's parts. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { answerOrFailure, answerParts, commandFailedText, type Emitter } from '../../src/kit/index.js';

describe('answerOrFailure', () => {
  it("passes a command's answer through", async () => {
    const answer = { markdown: 'done', buttons: [] };
    expect(await answerOrFailure(Promise.resolve(answer), pino({ level: 'silent' }))).toBe(answer);
  });

  it('turns a failure into the failure text and logs it as an error', async () => {
    const lines: Array<{ level: number; msg: string; err?: { message: string } }> = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const answer = await answerOrFailure(Promise.reject(new Error('store down')), log);
    expect(answer).toEqual({ markdown: commandFailedText('store down') });
    expect(lines.map((l) => [l.level, l.msg, l.err?.message])).toEqual([[50, 'command failed', 'store down']]);
  });
});

describe('answerParts', () => {
  it("hands the emitter the answer's Markdown parsed, no title, and its buttons", () => {
    const calls: unknown[][] = [];
    const emitter: Pick<Emitter, 'markdown'> = {
      markdown: (...args) => {
        calls.push(args);
        return [{ body: 'drawn', text: 'drawn' }];
      },
    };
    const buttons = [[{ label: 'Run now', action: { kind: 'job' as const, id: 'j1', op: 'run' as const } }]];
    expect(answerParts(emitter, { markdown: '**Jobs**', buttons })).toEqual([{ body: 'drawn', text: 'drawn' }]);
    const [tokens, title, passed] = calls[0] ?? [];
    expect((tokens as Array<{ type: string }>).map((t) => t.type)).toContain('paragraph');
    expect(title).toBeUndefined();
    expect(passed).toBe(buttons);
  });
});

/**
 * The kit's glue around `core.command` (`kit/command-answer.ts`): a platform command's words and
 * the thread it acts on, a failure still answers, an answer as an emitter's parts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  answerOrFailure,
  answerParts,
  type ChannelCore,
  commandFailedText,
  commandWords,
  type Conversation,
  type Emitter,
  latestThread,
} from '../../src/kit/index.js';

describe('commandWords', () => {
  it('reads the first word as the name, lower case, and the rest as its arguments', () => {
    expect(commandWords('  Model   gpt-5 high ')).toEqual({ name: 'model', args: 'gpt-5 high' });
    expect(commandWords('new\nBerlin trip')).toEqual({ name: 'new', args: 'Berlin trip' });
    expect(commandWords('stop')).toEqual({ name: 'stop', args: '' });
  });

  it('is help when nothing follows the platform command', () => {
    expect(commandWords(undefined)).toEqual({ name: 'help', args: '' });
    expect(commandWords('   ')).toEqual({ name: 'help', args: '' });
  });
});

describe('latestThread', () => {
  const coreWith = (row: Partial<Conversation> | undefined, asked: string[][] = []) =>
    ({
      chats: {
        latest: async (channel: string, chatKey: string) => {
          asked.push([channel, chatKey]);
          return row as Conversation | undefined;
        },
      },
    }) as unknown as Pick<ChannelCore, 'chats'>;

  it("is the channel's most recently active conversation", async () => {
    const asked: string[][] = [];
    const ref = await latestThread(coreWith({ thread_key: '1700000000.000100' }, asked), 'slack', 'C1');
    expect(ref).toEqual({ channel: 'slack', chatKey: 'C1', threadKey: '1700000000.000100' });
    expect(asked).toEqual([['slack', 'C1']]);
  });

  it('is null for a channel without conversations', async () => {
    expect(await latestThread(coreWith(undefined), 'discord', '42')).toBeNull();
  });
});

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

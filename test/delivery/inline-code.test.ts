/**
 * Backticks in the program's own sentences are never shown as backticks: a notice (a chat error)
 * shows its code spans as code in every channel, an "Always" button (plain text) quotes the
 * command, and the rest of such a sentence is not read as Markdown.
 */
import { describe, expect, it } from 'vitest';
import { SLACK_CARD_LIMITS } from '../../src/channels/slack/blocks.js';
import { slackEmitter } from '../../src/channels/slack/emitter.js';
import { TELEGRAM_CARD_LIMITS } from '../../src/channels/telegram/cards.js';
import { telegramEmitter } from '../../src/channels/telegram/emitter.js';
import type { ApprovalContent, NoticeContent } from '../../src/contract/content.js';
import { approvalView, noticeView } from '../../src/delivery/cards.js';
import { codeSpans, quotedCode } from '../../src/delivery/inline-code.js';
import { alwaysScopeText } from '../../src/delivery/grant-words.js';

const error: NoticeContent = {
  type: 'notice',
  level: 'error',
  text: 'cannot reach the model endpoint at http://127.0.0.1:9/v1 — is the server running? (`switchboard doctor` checks)',
};

describe('code spans in the program’s sentences', () => {
  it('are found with the Markdown lexer; nothing else is read as Markdown', () => {
    expect(codeSpans('run `switchboard doctor` on src/**/*.ts and my_file_name')).toEqual([
      'run ',
      { code: 'switchboard doctor' },
      ' on src/**/*.ts and my_file_name',
    ]);
    expect(codeSpans('a lone ` stays')).toEqual(['a lone ` stays']);
    expect(quotedCode('bash with command exactly `ls -la`')).toBe('bash with command exactly “ls -la”');
  });

  it('a chat error shows `switchboard doctor` as code, not between backticks', () => {
    const view = noticeView(error, TELEGRAM_CARD_LIMITS);
    expect(view.blocks[0]).toEqual({
      kind: 'text',
      spans: [
        '⚠️ cannot reach the model endpoint at http://127.0.0.1:9/v1 — is the server running? (',
        { code: 'switchboard doctor' },
        ' checks)',
      ],
    });
    const html = (telegramEmitter((p) => p ?? '').notice(error)[0]!.body as { html: string }).html;
    expect(html).toContain('<code>switchboard doctor</code>');
    expect(html).not.toContain('`');
    const slack = JSON.stringify(slackEmitter.notice(error)[0]!.body);
    expect(slack).toContain('`switchboard doctor`'); // mrkdwn's own code mark
    expect(noticeView(error, SLACK_CARD_LIMITS).blocks[0]).toMatchObject({
      spans: [expect.any(String), { code: 'switchboard doctor' }, ' checks)'],
    });
  });

  it('the "Always" button of an exact-arguments grant quotes the command instead of showing backticks', () => {
    const covers = alwaysScopeText('bash', null, JSON.stringify({ command: 'ls -la' }));
    expect(covers).toBe('bash with command exactly `ls -la`');
    const approval: ApprovalContent = {
      type: 'approval',
      id: 'ap1',
      label: 'bash ls -la',
      preview: '$ ls -la',
      requester: 'web:ada',
      alwaysCovers: covers,
      state: 'pending',
      scope: null,
      by: null,
      note: null,
    };
    const always = approvalView(approval, TELEGRAM_CARD_LIMITS).buttons[1]![1]!.label;
    expect(always).toBe('♾ Always: bash with command exactly “ls -la”');
  });
});

import { describe, expect, it } from 'vitest';
import { approvalCard, approvalOutcome, clipPreview, PREVIEW_LIMITS, principalMention, questionCard, toolLine } from '../../src/channels/slack/blocks.js';
import { refusalText } from '../../src/delivery/notices.js';
import { isSlackFileUrl } from '../../src/channels/slack/files.js';
import { stripMention } from '../../src/channels/slack/inbound.js';
import { normaliseApiUrl } from '../../src/channels/slack/slack-channel.js';

type AnyBlock = { type: string; text?: { text: string }; elements?: Array<{ text: string | { text: string }; value?: string }> };

describe('Slack Block Kit builders', () => {
  it('clips a preview to 600 characters per part and 2700 in all', () => {
    const preview = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(900)).join('\n\n');
    const clipped = clipPreview(preview);
    const parts = clipped.split('\n\n');
    for (const p of parts.slice(0, -1)) expect(p.length).toBeLessThanOrEqual(PREVIEW_LIMITS.itemChars);
    expect(clipped.length).toBeLessThanOrEqual(PREVIEW_LIMITS.totalChars + 60);
    expect(parts.at(-1)).toMatch(/more parts not shown/);
    expect(clipPreview('short\n\npreview')).toBe('short\n\npreview');
  });

  it('builds an approval card that stays inside Slack limits with a hostile preview', () => {
    const card = approvalCard({
      id: 'ap1',
      label: 'bash rm -rf <dir> && echo `x`',
      preview: '```\nclosing fence early\n```\n' + 'y'.repeat(5000),
      requester: 'slack:UALICE',
    });
    const blocks = card.blocks as AnyBlock[];
    for (const b of blocks) if (b.type === 'section') expect(b.text!.text.length).toBeLessThanOrEqual(3000);
    const previewBlock = blocks[1]!.text!.text;
    expect(previewBlock.match(/```/g)).toHaveLength(2);
    expect(blocks[0]!.text!.text).toContain('&lt;dir&gt; &amp;&amp;');
    expect(blocks[2]!.elements![0]!.text).toContain('<@UALICE>');
  });

  it('renders outcomes without buttons, except the "No note" button while a note is awaited', () => {
    const base = { id: 'ap1', scope: null, by: 'slack:UB', label: 'bash ls', note: null };
    const approved = approvalOutcome({ ...base, state: 'approved', scope: 'session' });
    expect(approved.blocks.map((b) => b.type)).toEqual(['section']);
    expect(JSON.stringify(approved.blocks)).toContain('approved for this session by <@UB>');
    const waiting = approvalOutcome({ ...base, state: 'awaiting_note' });
    expect((waiting.blocks[1] as AnyBlock).elements!.map((e) => e.value)).toEqual(['ap1']);
    expect(JSON.stringify(approvalOutcome({ ...base, state: 'denied', note: 'no <way>' }).blocks)).toContain('\\n> no &lt;way&gt;');
    expect(JSON.stringify(approvalOutcome({ ...base, state: 'expired' }).blocks)).toContain('expired');
  });

  it('limits question buttons to 25 and button text to 75 characters', () => {
    const answers = Array.from({ length: 30 }, (_, i) => `answer ${i} ${'z'.repeat(100)}`);
    const card = questionCard({ id: 'q1', question: 'Pick <one>', answers });
    const actions = card.blocks.find((b) => b.type === 'actions') as AnyBlock;
    expect(actions.elements).toHaveLength(25);
    for (const e of actions.elements!) {
      expect((e.text as { text: string }).text.length).toBeLessThanOrEqual(75);
      expect(JSON.parse(e.value!).id).toBe('q1');
    }
    expect(JSON.parse(actions.elements![3]!.value!).a).toBe(answers[3]);
  });

  it('formats tool lines and refusals', () => {
    expect(toolLine('bash git status').text).toBe('🔧 bash git status…');
    expect(JSON.stringify(toolLine('bash ls', 'failed', 'exit 2\nmore').blocks)).toContain('❌ `bash ls` — exit 2');
    expect(refusalText('already_decided', 'approval', principalMention('slack:UX'))).toContain('already decided by <@UX>');
    expect(refusalText('expired', 'question')).toContain('expired');
  });

  it('strips only the bot mention and normalises the API URL', () => {
    expect(stripMention('<@U0BOT> hello <@UALICE>', 'U0BOT')).toBe('hello <@UALICE>');
    expect(stripMention('<@U0BOT|switchboard>  hi', 'U0BOT')).toBe('hi');
    expect(normaliseApiUrl('http://h/api')).toBe('http://h/api/');
    expect(normaliseApiUrl('http://h/api//')).toBe('http://h/api/');
    expect(normaliseApiUrl(undefined)).toBeUndefined();
  });

  it('sends the bot token only to Slack file hosts or the configured API host', () => {
    expect(isSlackFileUrl('https://files.slack.com/files-pri/T1-F1/a.txt')).toBe(true);
    expect(isSlackFileUrl('http://files.slack.com/files-pri/T1-F1/a.txt')).toBe(false);
    expect(isSlackFileUrl('https://evil.example/slack.com/a.txt')).toBe(false);
    expect(isSlackFileUrl('https://slack.com.evil.example/a.txt')).toBe(false);
    expect(isSlackFileUrl('http://127.0.0.1:9000/files/F1/a', 'http://127.0.0.1:9000/api/')).toBe(true);
    expect(isSlackFileUrl('http://127.0.0.1:9001/files/F1/a', 'http://127.0.0.1:9000/api/')).toBe(false);
    expect(isSlackFileUrl('file:///etc/passwd', 'http://127.0.0.1:9000/api/')).toBe(false);
  });
});

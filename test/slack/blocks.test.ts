import { describe, expect, it } from 'vitest';
import { principalMention, SLACK_CARD_LIMITS, viewMessage } from '../../src/channels/slack/blocks.js';
import type { ApprovalContent } from '../../src/contract/content.js';
import { approvalView, questionView, toolView } from '../../src/delivery/cards.js';
import { refusalText } from '../../src/delivery/notices.js';
import { stripMention } from '../../src/channels/slack/inbound.js';
import { normaliseApiUrl } from '../../src/channels/slack/doctor.js';

type AnyBlock = {
  type: string;
  text?: { text: string };
  elements?: Array<{ text: string | { text: string }; value?: string; action_id?: string }>;
};
const visible = (m: { blocks: unknown[] }) =>
  (m.blocks as AnyBlock[])
    .map(
      (b) =>
        b.text?.text ?? (b.elements ?? []).map((e) => (typeof e.text === 'string' ? e.text : e.text.text)).join(' '),
    )
    .join('\n');

const pendingApproval = {
  type: 'approval' as const,
  id: 'ap1',
  label: 'bash ls',
  preview: '',
  requester: 'slack:UALICE',
  state: 'pending' as const,
  scope: null,
  by: null,
  note: null,
};
const approval = (c: Partial<ApprovalContent>) =>
  viewMessage(approvalView({ ...pendingApproval, ...c }, SLACK_CARD_LIMITS));
const pendingQuestion = {
  type: 'question' as const,
  id: 'q1',
  question: 'Pick <one>',
  answers: [],
  state: 'pending' as const,
  answer: null,
  by: null,
};

describe('Slack Block Kit rendering of card views', () => {
  it('shows a preview whole when its fenced form fits a section, else cut at a line with a mark', () => {
    const short = approval({ preview: 'ls -la\n\ncat  a.txt' });
    expect((short.blocks as AnyBlock[])[1]!.text!.text).toBe('```\nls -la\n\ncat  a.txt\n```');
    const preview = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(900)).join('\n\n');
    const cut = approval({ preview, wholeFile: { name: 'approval-ap1-arguments.txt', sent: true } });
    const code = (cut.blocks as AnyBlock[])[1]!.text!.text;
    expect(code.length).toBeLessThanOrEqual(3000);
    // Cut at the end of a line: the last shown paragraph is whole.
    expect(code).toContain(`\n${'2'.repeat(900)}\n`);
    // One long line is cut as late as fits.
    const line = (approval({ preview: 'x'.repeat(10_000) }).blocks as AnyBlock[])[1]!.text!.text;
    expect(line.length).toBeGreaterThan(2950);
    expect(line.length).toBeLessThanOrEqual(3000);
    expect(code).toMatch(/⟨… [\d ]+ more characters on \d+ lines not shown on this card⟩\n```$/);
    expect(visible(cut)).toContain('the whole arguments are in the file `approval-ap1-arguments.txt`');
  });

  it('builds an approval card that stays inside Slack limits with a hostile preview', () => {
    const hostile = {
      label: 'bash rm -rf <dir> && echo `x`',
      preview: '```\nclosing fence early\n```\n' + '<'.repeat(5000),
    };
    const card = approval({ ...hostile, wholeFile: { name: 'approval-ap1-arguments.txt', sent: true } });
    const blocks = card.blocks as AnyBlock[];
    expect(blocks.map((b) => b.type)).toEqual(['section', 'section', 'section', 'context', 'actions']);
    for (const b of blocks) if (b.type === 'section') expect(b.text!.text.length).toBeLessThanOrEqual(3000);
    const previewBlock = blocks[1]!.text!.text;
    expect(previewBlock.match(/```/g)).toHaveLength(2);
    expect(blocks[0]!.text!.text).toContain('&lt;dir&gt; &amp;&amp;');
    expect(blocks[0]!.text!.text).not.toContain('`x`');
    expect(blocks[3]!.elements![0]!.text).toContain('<@UALICE>');
    expect((blocks[4] as { block_id?: string }).block_id).toBe('approval:ap1');
    expect(blocks[4]!.elements!.map((e) => (e.text as { text: string }).text)).toHaveLength(4);
    expect(card.text).toBe('Approval needed: bash rm -rf <dir> && echo `x`');
    // Without the file, the card cannot show what would run: it offers Deny alone.
    const unsent = approval(hostile).blocks as AnyBlock[];
    expect(unsent.at(-1)!.elements!.map((e) => (e.text as { text: string }).text)).toEqual(['❌ Deny']);
  });

  it('renders outcomes without buttons, except the "No note" button while a note is awaited', () => {
    const base = { scope: null, by: 'slack:UB', note: null };
    const approved = approval({ ...base, state: 'approved', scope: 'session' });
    expect(approved.blocks.map((b) => b.type)).toEqual(['section']);
    expect(JSON.stringify(approved.blocks)).toContain('*Approved* for this session by <@UB>');
    const waiting = approval({ ...base, state: 'awaiting_note' });
    const actions = waiting.blocks.find((b) => b.type === 'actions') as AnyBlock & { block_id: string };
    expect(actions.elements!.map((e) => e.value)).toEqual(['a:ap1:x']);
    expect(actions.block_id).toBe('note:ap1');
    expect(JSON.stringify(approval({ ...base, state: 'denied', note: 'no <way>\nreally' }).blocks)).toContain(
      '> *Note:* no &lt;way&gt;\\n> really',
    );
    expect(JSON.stringify(approval({ ...base, state: 'expired' }).blocks)).toContain('*Expired* without a decision');
  });

  it('limits question buttons to 25 and button text to 75 characters', () => {
    const answers = Array.from({ length: 30 }, (_, i) => `answer ${i} ${'z'.repeat(100)}`);
    const card = viewMessage(questionView({ ...pendingQuestion, answers }, SLACK_CARD_LIMITS));
    const actions = card.blocks.find((b) => b.type === 'actions') as AnyBlock;
    expect(actions.elements).toHaveLength(25);
    for (const e of actions.elements!) {
      expect((e.text as { text: string }).text.length).toBeLessThanOrEqual(75);
      expect(e.value).toMatch(/^q:q1:\d+$/);
    }
    // The answer goes by its index (the router reads its text from the row); action ids are unique in the block.
    expect(actions.elements![3]!.value).toBe('q:q1:3');
    expect(new Set(actions.elements!.map((e) => e.action_id)).size).toBe(25);
    expect(JSON.stringify(card.blocks)).toContain('Pick &lt;one&gt;');
  });

  it('keeps a very long question inside one section', () => {
    const card = viewMessage(questionView({ ...pendingQuestion, question: '&'.repeat(5000) }, SLACK_CARD_LIMITS));
    const first = (card.blocks[0] as AnyBlock).text!.text;
    expect(first.length).toBeLessThanOrEqual(3000);
    expect(first).toMatch(/&amp;…$/);
  });

  it('keeps the answer of a long question visible: lines move to a new section rather than being cut', () => {
    const card = viewMessage(
      questionView(
        { ...pendingQuestion, question: 'q'.repeat(2800), state: 'answered', answer: 'a'.repeat(1500), by: 'slack:UA' },
        SLACK_CARD_LIMITS,
      ),
    );
    const texts = (card.blocks as AnyBlock[]).map((b) => b.text!.text);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(3000);
    expect(texts.join('\n')).toContain(`*Answered* by <@UA>\n> ${'a'.repeat(1500)}`);
  });

  it('formats tool lines and refusals', () => {
    const tool = {
      type: 'tool' as const,
      name: 'bash',
      label: 'bash git status',
      state: 'running' as const,
      summary: '',
    };
    expect(viewMessage(toolView(tool, SLACK_CARD_LIMITS)).text).toBe('🔧 bash git status…');
    expect(visible(viewMessage(toolView(tool, SLACK_CARD_LIMITS, 'one\ntwo  \n\n')))).toBe(
      '🔧 `bash git status`… `two`',
    );
    const failed = viewMessage(
      toolView({ ...tool, label: 'bash ls', state: 'failed', summary: 'exit 2\nmore' }, SLACK_CARD_LIMITS),
    );
    expect(failed.blocks.map((b) => b.type)).toEqual(['context']);
    expect(JSON.stringify(failed.blocks)).toContain('❌ `bash ls` — exit 2');
    // The same lines as task cards (sent instead of the context block where the workspace takes them).
    expect(viewMessage(toolView(tool, SLACK_CARD_LIMITS, 'one\ntwo\n')).task).toEqual({
      type: 'task_card',
      task_id: 'tool',
      title: 'bash git status',
      status: 'in_progress',
      output: {
        type: 'rich_text',
        elements: [{ type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'two' }] }],
      },
    });
    expect(failed.task).toMatchObject({
      status: 'error',
      output: { elements: [{ type: 'rich_text_section', elements: [{ text: 'exit 2' }] }] },
    });
    expect(viewMessage(toolView({ ...tool, label: '', state: 'done' }, SLACK_CARD_LIMITS)).task).toEqual({
      type: 'task_card',
      task_id: 'tool',
      title: 'tool call',
      status: 'complete',
    });
    expect(refusalText('already_decided', 'approval', principalMention('slack:UX'))).toContain(
      'already decided by <@UX>',
    );
    expect(refusalText('expired', 'question')).toContain('expired');
  });

  it('strips only the bot mention and normalises the API URL', () => {
    expect(stripMention('<@U0BOT> hello <@UALICE>', 'U0BOT')).toBe('hello <@UALICE>');
    expect(stripMention('<@U0BOT|switchboard>  hi', 'U0BOT')).toBe('hi');
    expect(normaliseApiUrl('http://h/api')).toBe('http://h/api/');
    expect(normaliseApiUrl('http://h/api//')).toBe('http://h/api/');
    expect(normaliseApiUrl(undefined)).toBeUndefined();
  });
});

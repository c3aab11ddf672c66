// biome-ignore-all lint/suspicious/noExplicitAny: Block Kit JSON and grammY keyboards are read loosely here
import { describe, expect, it } from 'vitest';
import { SLACK_CARD_LIMITS, viewMessage } from '../../src/channels/slack/blocks.js';
import { slackEmitter } from '../../src/channels/slack/emitter.js';
import { TELEGRAM_CARD_LIMITS } from '../../src/channels/telegram/cards.js';
import { telegramEmitter } from '../../src/channels/telegram/emitter.js';
import { webEmitter } from '../../src/channels/web/surface.js';
import type { ApprovalContent, NoticeContent, QuestionContent, ToolContent } from '../../src/contract/content.js';
import type { Part } from '../../src/contract/surface.js';
import { approvalView, cardEmitter, noticeView, questionView, toolView } from '../../src/delivery/cards.js';
import { TAPPED } from '../../src/delivery/notices.js';
import { parseMarkdown } from '../../src/delivery/render.js';
import { type CardView, spansText } from '../../src/delivery/views.js';

const approval = (c: Partial<ApprovalContent> = {}): ApprovalContent => ({
  type: 'approval',
  id: 'ap1',
  label: 'bash rm <old> && ls',
  preview: 'rm -rf old\n\nls -la',
  requester: 'slack:UALICE',
  alwaysCovers: 'bash in ~/work',
  state: 'pending',
  scope: null,
  by: null,
  note: null,
  ...c,
});
const question = (c: Partial<QuestionContent> = {}): QuestionContent => ({
  type: 'question',
  id: 'q1',
  question: 'Which colour?',
  answers: ['red', 'blue'],
  state: 'pending',
  answer: null,
  by: null,
  ...c,
});
const tool = (c: Partial<ToolContent> = {}): ToolContent => ({
  type: 'tool',
  name: 'bash',
  label: 'bash make',
  state: 'running',
  summary: '',
  ...c,
});

/** Every line a view says, with people named. */
function sentences(view: CardView, nameOf: (p: string) => string = (p) => p): string[] {
  return view.blocks.map((b) => {
    if (b.kind === 'heading') return `${b.icon} ${spansText(b.spans, nameOf)}`;
    if (b.kind === 'code') return b.text;
    if (b.kind === 'quote') return `${b.label ? `${b.label}: ` : ''}${b.text}`;
    return spansText(b.spans, nameOf);
  });
}

describe('card views', () => {
  it('an approval card asks with four buttons whose actions carry the row id', () => {
    const view = approvalView(approval(), TELEGRAM_CARD_LIMITS);
    expect(view).toMatchObject({
      card: 'approval',
      name: 'Approval: bash rm <old> && ls',
      compact: false,
      key: 'approval:ap1',
      fallback: 'Approval needed: bash rm <old> && ls',
    });
    expect(sentences(view)).toEqual([
      '🔐 Approval needed',
      'bash rm <old> && ls',
      'rm -rf old\n\nls -la',
      'Requested by slack:UALICE · only the requester or an admin can decide',
    ]);
    expect(view.buttons).toEqual([
      [
        { label: '✅ Approve', action: { kind: 'approval', id: 'ap1', choice: 'once' }, style: 'primary' },
        { label: '❌ Deny', action: { kind: 'approval', id: 'ap1', choice: 'deny' }, style: 'danger' },
      ],
      [
        { label: '🔁 This session', action: { kind: 'approval', id: 'ap1', choice: 'session' } },
        { label: '♾ Always: bash in ~/work', action: { kind: 'approval', id: 'ap1', choice: 'always' } },
      ],
    ]);
    expect(
      approvalView(approval({ alwaysCovers: undefined, preview: '  ' }), TELEGRAM_CARD_LIMITS).buttons[1]![1]!.label,
    ).toBe('♾ Always');
    expect(approvalView(approval({ preview: '' }), TELEGRAM_CARD_LIMITS).blocks.some((b) => b.kind === 'code')).toBe(
      false,
    );
  });

  it('says each outcome once, with who decided, the scope and the note', () => {
    const say = (c: Partial<ApprovalContent>) => sentences(approvalView(approval(c), TELEGRAM_CARD_LIMITS));
    expect(say({ state: 'approved', scope: 'session', by: 'slack:UB' })).toEqual([
      '✅ Approved for this session by slack:UB',
      'bash rm <old> && ls',
    ]);
    expect(say({ state: 'approved', scope: null, by: 'slack:UB' })[0]).toBe('✅ Approved once by slack:UB');
    expect(say({ state: 'approved', scope: 'always', by: null })[0]).toBe('✅ Approved always');
    expect(say({ state: 'denied', by: 'slack:UB', note: 'use b.txt' })).toEqual([
      '❌ Denied by slack:UB',
      'bash rm <old> && ls',
      'Note: use b.txt',
    ]);
    expect(say({ state: 'denied', by: 'slack:UB' })).toHaveLength(2);
    expect(say({ state: 'awaiting_note', by: 'slack:UB' })).toEqual([
      '❌ Denied by slack:UB',
      'bash rm <old> && ls',
      'Reply with a note for the model, or choose “No note”.',
    ]);
    expect(say({ state: 'expired' })[0]).toBe('⌛ Expired without a decision');
    expect(say({ state: 'cancelled' })[0]).toBe('⏹ Cancelled');
    const waiting = approvalView(approval({ state: 'awaiting_note', by: 'slack:UB' }), TELEGRAM_CARD_LIMITS);
    // The answer to the Deny tap asks for the note in the card's own words.
    expect(TAPPED.deniedAwaitingNote).toBe(`Denied. ${say({ state: 'awaiting_note', by: 'slack:UB' })[2]}`);
    expect(waiting.buttons).toEqual([
      [{ label: 'No note', action: { kind: 'approval', id: 'ap1', choice: 'no_note' } }],
    ]);
    expect(waiting.key).toBe('note:ap1');
    for (const state of ['approved', 'denied', 'expired', 'cancelled'] as const)
      expect(approvalView(approval({ state }), TELEGRAM_CARD_LIMITS).buttons).toEqual([]);
    // The name stays the same through every state (the web chat finds the card by it).
    expect(
      new Set(
        ['pending', 'approved', 'expired'].map(
          (state) => approvalView(approval({ state: state as 'pending' }), TELEGRAM_CARD_LIMITS).name,
        ),
      ).size,
    ).toBe(1);
  });

  it('a question card: one button per answer (limited by the channel), then how it ended', () => {
    const view = questionView(question(), TELEGRAM_CARD_LIMITS);
    expect(sentences(view)).toEqual(['❓ Which colour?', 'Choose an answer or reply with your own.']);
    expect(view.buttons).toEqual([
      [{ label: 'red', action: { kind: 'question', id: 'q1', index: 0 } }],
      [{ label: 'blue', action: { kind: 'question', id: 'q1', index: 1 } }],
    ]);
    expect(sentences(questionView(question({ answers: [] }), TELEGRAM_CARD_LIMITS))[1]).toBe('Reply with your answer.');
    const many = Array.from({ length: 30 }, (_, i) => `answer ${i} ${'z'.repeat(100)}`);
    expect(questionView(question({ answers: many }), TELEGRAM_CARD_LIMITS).buttons).toHaveLength(20);
    expect(questionView(question({ answers: many }), SLACK_CARD_LIMITS).buttons).toHaveLength(25);
    for (const [row] of questionView(question({ answers: many }), TELEGRAM_CARD_LIMITS).buttons)
      expect(row!.label.length).toBeLessThanOrEqual(60);
    expect(questionView(question({ answers: ['  '] }), TELEGRAM_CARD_LIMITS).buttons[0]![0]!.label).toBe('Option 1');
    expect(
      sentences(questionView(question({ state: 'answered', answer: 'blue', by: 'telegram:1' }), TELEGRAM_CARD_LIMITS)),
    ).toEqual(['❓ Which colour?', '✅ Answered by telegram:1', 'blue']);
    expect(sentences(questionView(question({ state: 'superseded' }), TELEGRAM_CARD_LIMITS))[1]).toBe(
      'Superseded by a newer question.',
    );
    expect(sentences(questionView(question({ state: 'cancelled' }), TELEGRAM_CARD_LIMITS))[1]).toBe('Cancelled.');
    expect(questionView(question({ state: 'answered', answer: 'x' }), TELEGRAM_CARD_LIMITS).buttons).toEqual([]);
  });

  it('a tool line: running with the tail of its output (as the channel allows), then icon and summary', () => {
    const running = toolView(tool(), TELEGRAM_CARD_LIMITS, 'step 1\nstep 2\n\n');
    expect(running.compact).toBe(true);
    expect(sentences(running)).toEqual(['🔧 bash make…', 'step 1\nstep 2']);
    expect(sentences(toolView(tool(), SLACK_CARD_LIMITS, 'step 1\nstep 2\n'))[1]).toBe('step 2');
    expect(sentences(toolView(tool(), TELEGRAM_CARD_LIMITS, 'x'.repeat(5000)))[1]).toHaveLength(800);
    expect(sentences(toolView(tool({ state: 'done', summary: 'built\nand more' }), TELEGRAM_CARD_LIMITS))).toEqual([
      '✅ bash make — built',
    ]);
    expect(sentences(toolView(tool({ state: 'failed', summary: '' }), TELEGRAM_CARD_LIMITS))).toEqual(['❌ bash make']);
    expect(toolView(tool({ state: 'cancelled' }), TELEGRAM_CARD_LIMITS).fallback).toBe('⏹ bash make');
  });

  it('a notice: its icon and text, trimmed to the channel', () => {
    const notice: NoticeContent = { type: 'notice', level: 'error', text: 'x'.repeat(4000) };
    const view = noticeView(notice, TELEGRAM_CARD_LIMITS);
    expect(view.tone).toBe('error');
    expect(sentences(view)[0]!.startsWith('⚠️ xxx')).toBe(true);
    expect(sentences(view)[0]!.length).toBeLessThanOrEqual(3003);
    expect(sentences(noticeView({ type: 'notice', level: 'info', text: 'Saved.' }, SLACK_CARD_LIMITS))).toEqual([
      'ℹ️ Saved.',
    ]);
  });
});

// --- One content, three channels: the same words. ---

const NAMES: Record<string, string> = { 'slack:UALICE': 'Alice', 'slack:UB': 'Bob' };
const tg = telegramEmitter((p) => (p ? (NAMES[p] ?? p) : 'someone'));

/** Slack mrkdwn as a person reads it: marks gone, entities and mentions resolved. */
function slackPlain(part: Part): { text: string; buttons: string[] } {
  const blocks = (part.body as { blocks: any[] }).blocks;
  const texts = blocks
    .filter((b) => b.type !== 'actions')
    .map((b) => (b.type === 'context' ? b.elements.map((e: any) => e.text).join(' ') : b.text.text))
    .map((t: string) =>
      t
        .replace(/^```\n([\s\S]*)\n```$/, '$1')
        .replace(/^> ?/gm, '')
        .replace(/[*`]/g, '')
        .replace(/<@(U\w+)>/g, (_m, id: string) => NAMES[`slack:${id}`] ?? id)
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
    );
  const buttons = blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements.map((e: any) => e.text.text));
  return { text: texts.join('\n'), buttons };
}

function telegramPlain(part: Part): { text: string; buttons: string[] } {
  const keyboard = (part.body as { keyboard?: { inline_keyboard: Array<Array<{ text: string }>> } }).keyboard;
  return { text: part.text, buttons: (keyboard?.inline_keyboard ?? []).flat().map((b) => b.text) };
}

const SAMPLES: Array<[string, (e: typeof tg) => Part[]]> = [
  ['pending approval', (e) => e.approval(approval())],
  ['approval awaiting a note', (e) => e.approval(approval({ state: 'awaiting_note', by: 'slack:UB' }))],
  ['approved', (e) => e.approval(approval({ state: 'approved', scope: 'session', by: 'slack:UB' }))],
  ['denied with a note', (e) => e.approval(approval({ state: 'denied', by: 'slack:UB', note: 'not <there>' }))],
  ['expired', (e) => e.approval(approval({ state: 'expired' }))],
  ['cancelled', (e) => e.approval(approval({ state: 'cancelled' }))],
  ['pending question', (e) => e.question(question())],
  ['answered question', (e) => e.question(question({ state: 'answered', answer: 'blue', by: 'slack:UALICE' }))],
  ['superseded question', (e) => e.question(question({ state: 'superseded' }))],
  ['finished tool', (e) => e.tool(tool({ state: 'done', summary: 'exit 0' }))],
  ['error notice', (e) => e.notice({ type: 'notice', level: 'error', text: 'The model is away & back soon' })],
];

describe('Telegram, Slack and the web chat say the same words', () => {
  it.each(SAMPLES)('%s', (_name, show) => {
    const t = telegramPlain(show(tg)[0]!);
    const s = slackPlain(show(slackEmitter)[0]!);
    expect(s.text).toBe(t.text);
    expect(s.buttons).toEqual(t.buttons);
    // The web chat gets the view itself: its sentences are the same ones.
    const web = (show(webEmitter)[0]!.body as { kind: string; view: CardView }).view;
    expect(sentences(web, (p) => NAMES[p] ?? p).join('\n')).toBe(t.text);
    expect(web.buttons.flat().map((b) => b.label)).toEqual(t.buttons);
  });

  it('every channel falls back to the same plain line', () => {
    for (const [, show] of SAMPLES) {
      const view = (show(webEmitter)[0]!.body as { view: CardView }).view;
      expect(show(slackEmitter)[0]!.text).toBe(view.fallback);
      expect(view.fallback).not.toMatch(/Alice|Bob|slack:/);
    }
  });

  it('a notification title has the same icon everywhere', () => {
    const tokens = parseMarkdown('disk 90% full');
    expect(tg.markdown(tokens, 'disk')[0]!.text.startsWith('🔔 disk')).toBe(true);
    expect(slackEmitter.markdown(tokens, 'disk')[0]!.text.startsWith('🔔 *disk*')).toBe(true);
    expect((webEmitter.markdown(tokens, 'disk')[0]!.body as { html: string }).html).toContain(
      '<strong>🔔 disk</strong>',
    );
  });

  it('renders people as each channel can: a Slack mention, a known Telegram name', () => {
    const decided = approval({ state: 'approved', by: 'slack:UB' });
    expect(JSON.stringify(viewMessage(approvalView(decided, SLACK_CARD_LIMITS)).blocks)).toContain('by <@UB>');
    expect(tg.approval(decided)[0]!.text).toContain('by Bob');
    expect((tg.approval(decided)[0]!.body as { html: string }).html).toBe(
      '✅ <b>Approved</b> once by Bob\n<code>bash rm &lt;old&gt; &amp;&amp; ls</code>',
    );
  });
});

describe('cardEmitter', () => {
  it("draws each card content as its view within the channel's limits", () => {
    const drawn: CardView[] = [];
    const cards = cardEmitter(SLACK_CARD_LIMITS, (view) => {
      drawn.push(view);
      return [{ body: view.name, text: view.fallback }];
    });
    const notice: NoticeContent = { type: 'notice', level: 'info', text: 'compacted' };
    expect(cards.approval(approval())).toEqual([
      {
        body: approvalView(approval(), SLACK_CARD_LIMITS).name,
        text: approvalView(approval(), SLACK_CARD_LIMITS).fallback,
      },
    ]);
    cards.question(question());
    cards.notice(notice);
    cards.tool(tool(), 'last line');
    expect(drawn).toEqual([
      approvalView(approval(), SLACK_CARD_LIMITS),
      questionView(question(), SLACK_CARD_LIMITS),
      noticeView(notice, SLACK_CARD_LIMITS),
      toolView(tool(), SLACK_CARD_LIMITS, 'last line'),
    ]);
  });
});

/**
 * Cards as neutral data, with every word they say: the approval card, the question card, a
 * tool's status line, a notice, and the `/jobs` list. Each channel's formatter draws a view
 * (Telegram inline keyboards, Slack Block Kit, the web chat's buttons) and encodes its buttons.
 */
import type { Button } from '../contract/actions.js';
import type { ApprovalContent, NoticeContent, QuestionContent, ToolContent } from '../contract/content.js';
import type { Emitter, Part } from '../contract/surface.js';
import { OP_LABEL, opsFor } from './job-lines.js';
import type { Job } from '../store/schema.js';
import { codeSpans, quotedCode } from './inline-code.js';
import { jobsMarkdown, listedJobs, SCOPE_TEXT, TOOL_ICON } from './notices.js';
import { approvalFile, shownPreview } from './approval-preview.js';
import { type CardLimits, type CardView, outputTail, type Span, trimText, type ViewBlock } from './views.js';
import { visibleText } from './visible.js';

/** The icon of a notice in each level. */
export const NOTICE_ICON: Record<NoticeContent['level'], string> = { error: '⚠️', info: 'ℹ️' };

/** The label of a tool call as inline code (a label that is empty still says what it is). */
function labelSpan(label: string, limits: CardLimits): Span {
  return { code: trimText(label, limits.labelChars) || 'tool call' };
}

/** " by <who>" when someone is known to have decided. */
function byWho(by: string | null): Span[] {
  return by ? [' by ', { who: by }] : [];
}

/** Longest "Always" scope said on its button (the rest goes in a line of the card). */
const ALWAYS_BUTTON_CHARS = 48;
/** Longest scope said in that line (a grant's words name long values rather than repeat them). */
const SCOPE_LINE_CHARS = 320;

/**
 * What a pending card says of its arguments: the code block (whole, or cut with a mark), and when
 * cut where the rest is — in the file sent before the card, or nowhere here (then `approvable`
 * is false: the card offers no Approve for what this chat cannot show).
 */
function argumentBlocks(c: ApprovalContent, limits: CardLimits): { blocks: ViewBlock[]; approvable: boolean } {
  if (!c.preview) return { blocks: [], approvable: true };
  const shown = shownPreview(c.preview, limits);
  const blocks: ViewBlock[] = [{ kind: 'code', text: shown.code }];
  if (!shown.cut) return { blocks, approvable: true };
  const size = `${shown.cut.totalChars} characters`;
  if (c.wholeFile?.sent) {
    blocks.push({
      kind: 'text',
      spans: [
        `⚠️ Too long for this card (${size}): the whole arguments are in the file `,
        { code: c.wholeFile.name },
        ' sent just before it. Read it before you approve.',
      ],
    });
    return { blocks, approvable: true };
  }
  const why = trimText(visibleText(c.wholeFile?.reason ?? 'this chat takes no files'), 200);
  blocks.push({
    kind: 'text',
    spans: [
      `⚠️ Too long for this card (${size}), and the file with the whole arguments could not be sent here (${why}). `,
      'Approving is not offered for what this chat cannot show: deny it, or decide where the whole text is shown.',
    ],
  });
  return { blocks, approvable: false };
}

/** The approval card, in each state: pending with its four buttons, waiting for a note, or its outcome. */
export function approvalView(c: ApprovalContent, limits: CardLimits): CardView {
  // The label is the model's text too: no control or direction character acts on the card.
  const shownLabel = visibleText(c.label);
  const label = labelSpan(shownLabel, limits);
  const what = trimText(shownLabel, limits.labelChars) || 'tool call';
  const view = (blocks: ViewBlock[], fallback: string, buttons: Button[][] = [], key?: string): CardView => ({
    card: 'approval',
    name: `Approval: ${what}`,
    compact: false,
    ...(key ? { key } : {}),
    blocks,
    buttons,
    fallback,
  });
  const action = (choice: 'once' | 'session' | 'always' | 'deny' | 'no_note') => ({
    kind: 'approval' as const,
    id: c.id,
    choice,
  });
  switch (c.state) {
    case 'pending': {
      const args = argumentBlocks(c, limits);
      const blocks: ViewBlock[] = [
        { kind: 'heading', icon: '🔐', spans: [{ strong: 'Approval needed' }] },
        { kind: 'text', spans: [label] },
        ...args.blocks,
      ];
      const covers = c.alwaysCovers ? visibleText(c.alwaysCovers) : undefined;
      const room = Math.min(ALWAYS_BUTTON_CHARS, limits.buttonChars - 10);
      // A scope too long for its button is said on the card (its arguments' long values are named,
      // not repeated: they are shown above; a long path is cut at a line's length).
      if (args.approvable && covers && covers.length > room)
        blocks.push({
          kind: 'hint',
          spans: ['“Always” and “This session” cover ', { code: trimText(covers, SCOPE_LINE_CHARS) }],
        });
      blocks.push({
        kind: 'hint',
        spans: ['Requested by ', { who: c.requester }, ' · only the requester or an admin can decide'],
      });
      // A button is plain text: the command's code span is quoted, not shown with its backticks.
      const deny: Button = { label: '❌ Deny', action: action('deny'), style: 'danger' };
      const buttons: Button[][] = args.approvable
        ? [
            [{ label: '✅ Approve', action: action('once'), style: 'primary' }, deny],
            [
              { label: '🔁 This session', action: action('session') },
              {
                label: covers ? `♾ Always: ${trimText(quotedCode(covers), room)}` : '♾ Always',
                action: action('always'),
              },
            ],
          ]
        : [[deny]];
      return view(blocks, `Approval needed: ${what}`, buttons, `approval:${c.id}`);
    }
    case 'awaiting_note':
      return view(
        [
          { kind: 'heading', icon: '❌', spans: [{ strong: 'Denied' }, ...byWho(c.by)] },
          { kind: 'text', spans: [label] },
          { kind: 'hint', spans: ['Reply with a note for the model, or choose “No note”.'] },
        ],
        `Denied: ${what} — waiting for a note`,
        [[{ label: 'No note', action: action('no_note') }]],
        `note:${c.id}`,
      );
    case 'approved':
      return view(
        [
          {
            kind: 'heading',
            icon: '✅',
            spans: [{ strong: 'Approved' }, ` ${SCOPE_TEXT[c.scope ?? 'once']}`, ...byWho(c.by)],
          },
          { kind: 'text', spans: [label] },
        ],
        `Approved: ${what}`,
      );
    case 'denied': {
      const blocks: ViewBlock[] = [
        { kind: 'heading', icon: '❌', spans: [{ strong: 'Denied' }, ...byWho(c.by)] },
        { kind: 'text', spans: [label] },
      ];
      if (c.note?.trim()) blocks.push({ kind: 'quote', label: 'Note', text: trimText(c.note, limits.quoteChars) });
      return view(blocks, `Denied: ${what}`);
    }
    case 'expired':
      return view(
        [
          { kind: 'heading', icon: '⌛', spans: [{ strong: 'Expired' }, ' without a decision'] },
          { kind: 'text', spans: [label] },
        ],
        `Expired: ${what}`,
      );
    case 'cancelled':
      return view(
        [
          { kind: 'heading', icon: '⏹', spans: [{ strong: 'Cancelled' }] },
          { kind: 'text', spans: [label] },
        ],
        `Cancelled: ${what}`,
      );
  }
}

/** The question card: the question and one button per suggested answer; then how it ended. */
export function questionView(c: QuestionContent, limits: CardLimits): CardView {
  const question = trimText(c.question, limits.textChars);
  const blocks: ViewBlock[] = [{ kind: 'heading', icon: '❓', spans: [question] }];
  const base = { card: 'question' as const, name: 'Question', compact: false };
  switch (c.state) {
    case 'pending': {
      const answers = c.answers.slice(0, limits.maxAnswers);
      blocks.push({
        kind: 'hint',
        spans: [answers.length ? 'Choose an answer or reply with your own.' : 'Reply with your answer.'],
      });
      const buttons = answers.map((answer, index): Button[] => [
        {
          label: trimText(answer, limits.buttonChars) || `Option ${index + 1}`,
          action: { kind: 'question', id: c.id, index },
        },
      ]);
      return { ...base, key: `question:${c.id}`, blocks, buttons, fallback: `Question: ${question}` };
    }
    case 'answered':
      blocks.push({ kind: 'text', spans: ['✅ ', { strong: 'Answered' }, ...byWho(c.by)] });
      blocks.push({ kind: 'quote', text: trimText(c.answer ?? '', limits.quoteChars) });
      return { ...base, blocks, buttons: [], fallback: `Answered: ${trimText(c.answer ?? '', limits.quoteChars)}` };
    case 'superseded':
      blocks.push({ kind: 'hint', spans: ['Superseded by a newer question.'] });
      return { ...base, blocks, buttons: [], fallback: `Question superseded: ${question}` };
    case 'cancelled':
      blocks.push({ kind: 'hint', spans: ['Cancelled.'] });
      return { ...base, blocks, buttons: [], fallback: `Question cancelled: ${question}` };
  }
}

/**
 * A tool's status line: `🔧 label…` while it runs (with the tail of its output when it streams
 * some), then its icon and the first line of its summary.
 */
export function toolView(c: ToolContent, limits: CardLimits, tail?: string): CardView {
  const icon = TOOL_ICON[c.state];
  const spans: Span[] = [`${icon} `, labelSpan(c.label, limits)];
  const blocks: ViewBlock[] = [{ kind: 'text', spans }];
  let output: string;
  if (c.state === 'running') {
    spans.push('…');
    output = tail ? outputTail(tail, limits.tailChars, limits.tailLines) : '';
    if (output) blocks.push({ kind: 'code', text: output });
  } else {
    output = trimText(c.summary.trim().split('\n')[0] ?? '', limits.labelChars);
    if (output) spans.push(` — ${output}`);
  }
  const title = trimText(c.label, limits.labelChars);
  const fallback = `${icon} ${title}${c.state === 'running' ? '…' : ''}`;
  const task = { title: title || 'tool call', state: c.state, output };
  return { card: 'tool', name: 'Tool', compact: true, blocks, buttons: [], fallback, task };
}

/**
 * A notice from the system (an error, a piece of news): one line after its icon. Only its code
 * spans are read (`switchboard doctor` shows as code); nothing else is parsed as Markdown.
 */
export function noticeView(c: NoticeContent, limits: CardLimits): CardView {
  const text = `${NOTICE_ICON[c.level]} ${trimText(c.text, limits.textChars)}`;
  return {
    card: 'notice',
    name: 'Notice',
    compact: false,
    ...(c.level === 'error' ? { tone: 'error' as const } : {}),
    blocks: [{ kind: 'text', spans: codeSpans(text) }],
    buttons: [],
    fallback: text,
  };
}

/** The `/jobs` list: its Markdown, and one row of buttons per listed job (pause or resume, run now, delete). */
export function jobListCard(jobs: Job[]): { markdown: string; buttons: Button[][] } {
  const buttons = listedJobs(jobs).map((job) =>
    opsFor(job).map(
      (op): Button => ({
        label: `${OP_LABEL[op]} ${job.name.slice(0, 16)}`,
        action: { kind: 'job', id: job.id, op },
        ...(op === 'delete' ? { style: 'danger' as const } : {}),
      }),
    ),
  );
  return { markdown: jobsMarkdown(jobs), buttons };
}

/**
 * The card members of a channel's {@link Emitter}: each card content as its view within the
 * channel's `limits`, drawn by the channel's `draw` (its formatter, e.g. Block Kit).
 */
export function cardEmitter(limits: CardLimits, draw: (view: CardView) => Part[]): Omit<Emitter, 'markdown'> {
  return {
    notice: (c: NoticeContent) => draw(noticeView(c, limits)),
    approval: (c: ApprovalContent) => draw(approvalView(c, limits)),
    approvalFile: (c: ApprovalContent) => approvalFile(c, limits),
    question: (c: QuestionContent) => draw(questionView(c, limits)),
    tool: (c: ToolContent, tail?: string) => draw(toolView(c, limits, tail)),
  };
}

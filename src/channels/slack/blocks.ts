/**
 * A card view (`delivery/cards.ts` writes its words) drawn as Block Kit: lines become mrkdwn
 * sections, previews fenced sections, hints context blocks, buttons one actions block whose
 * `block_id` is the card's key (each button's `value` carries its action and row id: codec.ts).
 */
import { fitRendered, SYSTEM_NAME, packBlocks, renderSpans, renderViewBlock, trimText } from '../../kit/index.js';
import type { BlockMarks, Button, Markup, CardLimits, CardView, Span, SpanMarks, TaskView } from '../../kit/index.js';
import { encodeAction } from './codec.js';
import { escapeMrkdwn, fenceCode } from './mrkdwn.js';
import { clipMrkdwn, SLACK_LIMITS } from './split.js';

/** A Block Kit block (kept loose: the SDK's union types add nothing here). */
export type Block = Record<string, unknown>;

/**
 * A message body: fallback text plus blocks. `task`: a tool line as a `task_card` block, sent
 * instead of `blocks` where the workspace takes task cards (the surface decides: `slack.task_cards`).
 */
export type CardMessage = { text: string; blocks: Block[]; task?: Block };

/** A tool's state as a task card's status (a cancelled or rejected call did not complete). */
const TASK_STATUS: Record<TaskView['state'], 'in_progress' | 'complete' | 'error'> = {
  running: 'in_progress',
  done: 'complete',
  failed: 'error',
  cancelled: 'error',
  rejected: 'error',
};

/** A Block Kit `task_card`: a plain-text title, its status, and as output text in a section or preformatted. */
export function taskCard(id: string, title: string, status: string, output?: string, preformatted = false): Block {
  const line = preformatted ? 'rich_text_preformatted' : 'rich_text_section';
  return {
    type: 'task_card',
    task_id: id,
    title,
    status,
    ...(output
      ? { output: { type: 'rich_text', elements: [{ type: line, elements: [{ type: 'text', text: output }] }] } }
      : {}),
  };
}

/**
 * A tool line as a task card: its label as the title, and as output the tail of a running tool
 * (preformatted) or the finished one's summary. One card a message, so its `task_id` need only be
 * unique there.
 */
export function taskCardBlock(task: TaskView): Block {
  return taskCard('tool', task.title, TASK_STATUS[task.state], task.output, task.state === 'running');
}

/** Block Kit's limits on a button: its text, and the elements of one actions block. */
const BUTTON_TEXT_CHARS = 75;
const ACTIONS_ELEMENTS = 25;

/**
 * What fits on a Slack card: a preview whose escaped and fenced form fits one section (3000
 * characters: longer arguments go whole in a file beside the card); button text within 75; at
 * most 25 answer buttons.
 */
export const SLACK_CARD_LIMITS: CardLimits = {
  labelChars: 200,
  textChars: 2800,
  quoteChars: 2000,
  previewChars: SLACK_LIMITS.sectionChars,
  measure: (preview) => fenceCode(preview).length,
  buttonChars: BUTTON_TEXT_CHARS,
  maxAnswers: ACTIONS_ELEMENTS,
  tailChars: 150,
  tailLines: 1,
};

/** Who, as a Slack mention when it is a Slack user. */
export function principalMention(by: string | null | undefined): string {
  if (!by) return SYSTEM_NAME;
  if (by.startsWith('slack:')) return `<@${escapeMrkdwn(by.slice('slack:'.length))}>`;
  return escapeMrkdwn(by);
}

/** Inline code: mrkdwn has no escape for a backquote inside one, so it becomes a look-alike. */
function inlineCode(text: string): string {
  return `\`${escapeMrkdwn(text).replace(/`/g, 'ˋ')}\``;
}

const spanMarks: SpanMarks = {
  text: escapeMrkdwn,
  strong: (s) => `*${escapeMrkdwn(s).replace(/\*/g, '∗')}*`,
  code: inlineCode,
  who: principalMention,
};
const spansMrkdwn = (spans: Span[]) => renderSpans(spans, spanMarks);
/** A compact view's blocks as pieces of its one line: code inline, a quote's words alone. */
const lineMarks: BlockMarks = {
  spans: spansMrkdwn,
  icon: escapeMrkdwn,
  code: (text) => inlineCode(text.trim()),
  quote: (text) => escapeMrkdwn(text),
  hint: spansMrkdwn,
};

const section = (text: string): Block => ({
  type: 'section',
  text: { type: 'mrkdwn', text: clipMrkdwn(text, SLACK_LIMITS.sectionChars) },
});
const context = (text: string): Block => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: clipMrkdwn(text, SLACK_LIMITS.sectionChars) }],
});

/** A card's lines as the packer reads them: they share a section while they fit, a longer one is clipped. */
const cardLines: Markup<string> = {
  measure: (line) => line.length,
  join: (a, b) => `${a}\n${b}`,
  separatorUnits: 1,
  cut: (line, max) => [clipMrkdwn(line, max)],
};

function buttonElement(b: Button, position: number): Block {
  const text = trimText(b.label, BUTTON_TEXT_CHARS);
  return {
    type: 'button',
    ...encodeAction(b.action, position),
    text: { type: 'plain_text', text: text || '…', emoji: true },
    ...(b.style ? { style: b.style } : {}),
  };
}

/** Rows of neutral buttons as Block Kit `actions` blocks, one a row (a `/jobs` list). */
export function buttonBlocks(rows: Button[][]): Block[] {
  return rows.map((row) => ({ type: 'actions', elements: row.slice(0, ACTIONS_ELEMENTS).map(buttonElement) }));
}

/** A card view as a Slack message. A compact view (a tool line) is one context block, or its task card. */
export function viewMessage(view: CardView): CardMessage {
  const text = clipMrkdwn(view.fallback, SLACK_LIMITS.sectionChars);
  if (view.compact) {
    const line = view.blocks.map((b) => renderViewBlock(b, lineMarks)).join(' ');
    return { text, blocks: [context(line)], ...(view.task ? { task: taskCardBlock(view.task) } : {}) };
  }
  const blocks: Block[] = [];
  let lines: string[] = [];
  // Lines share a section while they fit in one; a long question does not crowd out its answer.
  const flush = () => {
    blocks.push(...packBlocks(lines, SLACK_LIMITS.sectionChars, cardLines).map(section));
    lines = [];
  };
  for (const b of view.blocks) {
    if (b.kind === 'heading') lines.push(`${b.icon} ${spansMrkdwn(b.spans)}`);
    else if (b.kind === 'text') lines.push(spansMrkdwn(b.spans));
    else if (b.kind === 'quote')
      lines.push(`> ${b.label ? `*${escapeMrkdwn(b.label)}:* ` : ''}${escapeMrkdwn(b.text).replace(/\n/g, '\n> ')}`);
    else {
      flush();
      blocks.push(
        b.kind === 'code'
          ? section(fitRendered(b.text, SLACK_LIMITS.sectionChars, fenceCode))
          : context(spansMrkdwn(b.spans)),
      );
    }
  }
  flush();
  const buttons = view.buttons.flat().slice(0, ACTIONS_ELEMENTS);
  if (buttons.length)
    blocks.push({ type: 'actions', ...(view.key ? { block_id: view.key } : {}), elements: buttons.map(buttonElement) });
  return { text, blocks };
}

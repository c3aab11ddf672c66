/**
 * Block Kit builders for approval cards, question cards and tool status lines. Buttons carry the
 * database row id in `value`, so a click after a restart still finds its approval or question.
 */
import type { ApprovalContent, QuestionContent } from '../../contract/content.js';
import { SCOPE_TEXT, TOOL_ICON } from '../../delivery/notices.js';
import { escapeMrkdwn, fenceCode } from './mrkdwn.js';

/** Action ids of the buttons; the Bolt app routes on these. */
export const ACTION = {
  approveOnce: 'sb_approve_once',
  approveSession: 'sb_approve_session',
  approveAlways: 'sb_approve_always',
  deny: 'sb_deny',
  denyNoNote: 'sb_deny_no_note',
  answer: 'sb_answer',
} as const;

/** Preview limits on a card: per item (a paragraph of the preview) and in all. */
export const PREVIEW_LIMITS = { itemChars: 600, totalChars: 2700 } as const;

/** A Block Kit block (kept loose: the SDK's union types add nothing here). */
export type Block = Record<string, unknown>;

/** A message body: fallback text plus blocks. */
export interface CardMessage {
  text: string;
  blocks: Block[];
}

/** Button text is plain text of at most 75 characters. */
function buttonText(text: string): { type: 'plain_text'; text: string; emoji: true } {
  const t = text.length > 75 ? `${text.slice(0, 74)}…` : text;
  return { type: 'plain_text', text: t || '…', emoji: true };
}

function button(actionId: string, text: string, value: string, style?: 'primary' | 'danger'): Block {
  return { type: 'button', action_id: actionId, text: buttonText(text), value, ...(style ? { style } : {}) };
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function context(text: string): Block {
  return { type: 'context', elements: [{ type: 'mrkdwn', text }] };
}

/**
 * Shorten a tool preview for a card: each paragraph at most 600 characters, 2700 in all, so the
 * fenced result always fits one section block (3000).
 */
export function clipPreview(preview: string): string {
  const items = preview.replace(/\r\n/g, '\n').split(/\n{2,}/);
  const out: string[] = [];
  let total = 0;
  for (const [i, item] of items.entries()) {
    const clipped = item.length > PREVIEW_LIMITS.itemChars ? `${item.slice(0, PREVIEW_LIMITS.itemChars - 1)}…` : item;
    if (total + clipped.length > PREVIEW_LIMITS.totalChars) {
      out.push(`… (${items.length - i} more part${items.length - i === 1 ? '' : 's'} not shown)`);
      break;
    }
    out.push(clipped);
    total += clipped.length + 2;
  }
  return out.join('\n\n');
}

/** Who decided, as a Slack mention when it is a Slack user. */
export function principalMention(by: string | null | undefined): string {
  if (!by) return 'the system';
  if (by.startsWith('slack:')) return `<@${escapeMrkdwn(by.slice('slack:'.length))}>`;
  return escapeMrkdwn(by);
}

/** The approval card: label, clipped preview in a code block, four buttons. */
export function approvalCard(e: Pick<ApprovalContent, 'id' | 'label' | 'preview' | 'requester' | 'alwaysCovers'>): CardMessage {
  const label = escapeMrkdwn(e.label);
  const blocks: Block[] = [section(`:lock: *Approval needed* — \`${label.replace(/`/g, 'ˋ')}\``)];
  if (e.preview.trim()) blocks.push(section(fenceCode(clipPreview(e.preview))));
  blocks.push(context(`Requested by ${principalMention(e.requester)} · only the requester or an admin can decide`));
  blocks.push({
    type: 'actions',
    block_id: `approval:${e.id}`,
    elements: [
      button(ACTION.approveOnce, 'Approve', e.id, 'primary'),
      button(ACTION.deny, 'Deny', e.id, 'danger'),
      button(ACTION.approveSession, 'This session', e.id),
      button(ACTION.approveAlways, e.alwaysCovers ? `Always: ${e.alwaysCovers}`.slice(0, 75) : 'Always', e.id),
    ],
  });
  return { text: `Approval needed: ${e.label}`, blocks };
}

/** The card after a decision: outcome and who decided, buttons removed (or "No note" while waiting). */
export function approvalOutcome(e: Pick<ApprovalContent, 'id' | 'label' | 'state' | 'scope' | 'by' | 'note'>): CardMessage {
  const what = e.label || 'tool call';
  const head = `\`${escapeMrkdwn(what).replace(/`/g, 'ˋ')}\``;
  const who = principalMention(e.by);
  switch (e.state) {
    case 'approved':
      return {
        text: `Approved: ${what}`,
        blocks: [section(`:white_check_mark: ${head} approved ${SCOPE_TEXT[e.scope ?? 'once']} by ${who}`)],
      };
    case 'denied': {
      const note = e.note ? `\n> ${escapeMrkdwn(e.note).replace(/\n/g, '\n> ')}` : '';
      return { text: `Denied: ${what}`, blocks: [section(`:x: ${head} denied by ${who}${note}`)] };
    }
    case 'awaiting_note':
      return {
        text: `Denied: ${what} — waiting for a note`,
        blocks: [
          section(`:x: ${head} denied by ${who}. Reply in this thread with a note for the model, or:`),
          { type: 'actions', block_id: `note:${e.id}`, elements: [button(ACTION.denyNoNote, 'No note', e.id)] },
        ],
      };
    case 'expired':
      return { text: `Expired: ${what}`, blocks: [section(`:hourglass: ${head} expired without a decision`)] };
    case 'cancelled':
    case 'pending':
      return { text: `Cancelled: ${what}`, blocks: [section(`:no_entry_sign: ${head} cancelled`)] };
  }
}

/** The question card: the question and one button per suggested answer (value carries the answer). */
export function questionCard(e: Pick<QuestionContent, 'id' | 'question' | 'answers'>): CardMessage {
  const blocks: Block[] = [section(`:question: ${escapeMrkdwn(e.question)}`)];
  const answers = e.answers.slice(0, 25);
  if (answers.length) {
    blocks.push({
      type: 'actions',
      block_id: `question:${e.id}`,
      elements: answers.map((a, i) =>
        button(`${ACTION.answer}_${i}`, a, JSON.stringify({ id: e.id, a: a.slice(0, 1900) })),
      ),
    });
  }
  blocks.push(context('Click an answer or reply in this thread.'));
  return { text: `Question: ${e.question}`, blocks };
}

/** The question card after it was answered, superseded or cancelled. */
export function questionOutcome(e: Pick<QuestionContent, 'question' | 'state' | 'answer' | 'by'>): CardMessage {
  const q = e.question ? `:question: ${escapeMrkdwn(e.question)}\n` : '';
  if (e.state === 'answered') {
    const answer = escapeMrkdwn(e.answer ?? '').replace(/\n/g, '\n> ');
    return { text: `Answered: ${e.answer ?? ''}`, blocks: [section(`${q}> ${answer}\n— ${principalMention(e.by)}`)] };
  }
  return { text: `Question ${e.state}`, blocks: [section(`${q}_(${e.state})_`)] };
}

const STATUS_ICON: Record<string, string> = TOOL_ICON;

/** The last non-empty line of streamed output, shortened for a status line. */
export function outputTail(output: string, max = 150): string {
  const line = output.split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? '';
  return line.length > max ? `…${line.slice(-(max - 1))}` : line;
}

/**
 * The context line for a tool: `🔧 label…` while running (with the last line of its output when
 * it streams some), then an icon and the summary.
 */
export function toolLine(label: string, status?: string, summary?: string, tail?: string): CardMessage {
  const l = `\`${escapeMrkdwn(label).replace(/`/g, 'ˋ')}\``;
  if (!status) {
    const t = tail ? ` \`${escapeMrkdwn(tail).replace(/`/g, 'ˋ')}\`` : '';
    return { text: `🔧 ${label}…`, blocks: [context(`🔧 ${l}…${t}`)] };
  }
  const s = summary ? ` — ${escapeMrkdwn(summary.split('\n')[0]!.slice(0, 200))}` : '';
  return { text: `${STATUS_ICON[status] ?? '•'} ${label}`, blocks: [context(`${STATUS_ICON[status] ?? '•'} ${l}${s}`)] };
}

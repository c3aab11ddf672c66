/**
 * Telegram's emitter: delivery content → HTML messages (with inline keyboards on cards), split
 * under Telegram's 4096-character limit. Pure, so the wording is tested without a bot.
 */
import { InlineKeyboard } from 'grammy';
import type { Token } from 'marked';
import type { Button } from '../../contract/actions.js';
import type { ApprovalContent, NoticeContent, QuestionContent, ToolContent } from '../../contract/content.js';
import type { Emitter, Part } from '../../contract/surface.js';
import {
  approvalCardHtml,
  approvalKeyboard,
  type NameOf,
  noNoteKeyboard,
  questionCardHtml,
  questionKeyboard,
  resolvedApprovalHtml,
  resolvedQuestionHtml,
  trimText,
} from './cards.js';
import { TOOL_ICON } from '../../delivery/notices.js';
import { encodeCallback } from './callback-data.js';
import { escapeHtml, tokensToHtmlBlocks } from './markdown.js';
import { htmlToPlain, packBlocks, telegramLimits } from './split.js';

/** A Telegram message body: HTML and its buttons. */
export interface TelegramBody {
  html: string;
  keyboard?: InlineKeyboard;
}

/** Characters of streamed tool output kept on the status line. */
const TOOL_OUTPUT_TAIL = 800;


function part(html: string, keyboard?: InlineKeyboard): Part {
  return { body: keyboard ? { html, keyboard } : { html }, text: htmlToPlain(html) };
}

/** Rows of neutral buttons as an inline keyboard. */
export function keyboardOf(rows: Button[][]): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  rows.forEach((row, i) => {
    if (i > 0) keyboard.row();
    for (const b of row) keyboard.text(b.label, encodeCallback(b.action));
  });
  return keyboard;
}

/** The status line of a tool; while it runs, the tail of its output in a code block. */
export function toolHtml(c: ToolContent, tail?: string): string {
  let html = `${TOOL_ICON[c.state]} <code>${escapeHtml(c.label)}</code>`;
  if (c.state === 'running') html += '…';
  else if (c.summary.trim()) html += ` — ${escapeHtml(trimText(c.summary, 200))}`;
  if (c.state === 'running' && tail?.trim()) {
    const cut = tail.length > TOOL_OUTPUT_TAIL ? `…${tail.slice(-TOOL_OUTPUT_TAIL)}` : tail;
    html += `\n<pre>${escapeHtml(cut.trimEnd())}</pre>`;
  }
  return html;
}

/** Build the emitter; `nameOf` shows who decided a card. */
export function telegramEmitter(nameOf: NameOf): Emitter {
  return {
    markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
      const blocks = tokensToHtmlBlocks(tokens);
      if (title) blocks.unshift(`🔔 <b>${escapeHtml(trimText(title, 200))}</b>`);
      const htmls = packBlocks(blocks, telegramLimits.partUnits);
      return htmls.map((html, i) => part(html, i === htmls.length - 1 && buttons?.length ? keyboardOf(buttons) : undefined));
    },
    notice(c: NoticeContent): Part[] {
      return [part(`${c.level === 'error' ? '⚠️' : 'ℹ️'} ${escapeHtml(trimText(c.text, 3000))}`)];
    },
    approval(c: ApprovalContent): Part[] {
      if (c.state === 'pending') return [part(approvalCardHtml(c.label, c.preview), approvalKeyboard(c.id, c.alwaysCovers))];
      const html = resolvedApprovalHtml(c.label, c.state, c.scope, nameOf(c.by), c.note);
      return [part(html, c.state === 'awaiting_note' ? noNoteKeyboard(c.id) : undefined)];
    },
    question(c: QuestionContent): Part[] {
      if (c.state === 'pending') return [part(questionCardHtml(c.question), questionKeyboard(c.id, c.answers))];
      return [part(resolvedQuestionHtml(c.question, c.state, c.answer, nameOf(c.by)))];
    },
    tool(c: ToolContent, tail?: string): Part[] {
      return [part(toolHtml(c, tail))];
    },
  };
}

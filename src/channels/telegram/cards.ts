/**
 * A card view (`delivery/cards.ts` writes its words) drawn as Telegram HTML with an inline
 * keyboard. Pure, so a card is tested without a bot.
 */
import { InlineKeyboard } from 'grammy';
import { toolView, clipMiddle, renderSpans, renderViewBlock } from '../../kit/index.js';
import type { BlockMarks, Button, ToolContent, CardLimits, CardView, Span } from '../../kit/index.js';
export { trimText } from '../../kit/index.js';
import { encodeCallback } from './callback-data.js';
import { escapeHtml } from './markdown.js';
import { telegramLimits, visibleLength } from './split.js';

// Inbound code trims file names with it; one trim for every channel lives with the views.

/**
 * What fits on a Telegram card: the whole card stays far under 4096 characters, and a button's
 * `callback_data` is encoded from the row id alone (64 bytes; see callback-data.ts).
 */
export const TELEGRAM_CARD_LIMITS: CardLimits = {
  labelChars: 200,
  textChars: 3000,
  quoteChars: 500,
  // The card's other lines (label, notes, hints) take at most about 1 200 more: within 4096.
  previewChars: 2800,
  buttonChars: 60,
  maxAnswers: 20,
  tailChars: 800,
  tailLines: 1000,
};

/** Display name of a principal (`telegram:42` → a known name, else the id). */
export type NameOf = (principal: string | null | undefined) => string;

function spansHtml(spans: Span[], nameOf: NameOf): string {
  return renderSpans(spans, {
    text: escapeHtml,
    strong: (s) => `<b>${escapeHtml(s)}</b>`,
    code: (s) => `<code>${escapeHtml(s)}</code>`,
    who: (p) => escapeHtml(nameOf(p)),
  });
}

/** A view's blocks as Telegram HTML, one line (or `<pre>`) each. */
export function viewHtml(view: CardView, nameOf: NameOf): string {
  const marks: BlockMarks = {
    spans: (s) => spansHtml(s, nameOf),
    icon: escapeHtml,
    code: (text) => `<pre>${escapeHtml(text)}</pre>`,
    quote: (text, label) => `<blockquote>${label ? `${escapeHtml(label)}: ` : ''}${escapeHtml(text)}</blockquote>`,
    hint: (s) => `<i>${spansHtml(s, nameOf)}</i>`,
  };
  return view.blocks.map((b) => renderViewBlock(b, marks)).join('\n');
}

/**
 * Most of a finished call's output shown on its line, characters: with the line itself (a label
 * and a summary of at most 200 each) far under Telegram's 4096.
 */
export const TOOL_OUTPUT_CHARS = 3000;

/**
 * A tool's status line as Telegram HTML: the view's line, and once the call finished its output
 * in an expandable blockquote (collapsed to a few lines until tapped), its middle cut when long.
 * Output the summary already says whole (one short line) is not repeated.
 */
export function toolHtml(c: ToolContent, nameOf: NameOf, tail?: string): string {
  const line = viewHtml(toolView(c, TELEGRAM_CARD_LIMITS, tail), nameOf);
  const output =
    c.state === 'running'
      ? ''
      : (c.output ?? '')
          .replace(/\r\n/g, '\n')
          .replace(/^\s*\n/, '')
          .trimEnd();
  if (!output.trim() || (!output.includes('\n') && output.trim() === c.summary.trim())) return line;
  const room = Math.min(TOOL_OUTPUT_CHARS, telegramLimits.partUnits - visibleLength(line) - 1);
  return `${line}\n<blockquote expandable>${escapeHtml(clipMiddle(output, room))}</blockquote>`;
}

/** Rows of neutral buttons as an inline keyboard (each action encoded into `callback_data`). */
export function keyboardOf(rows: Button[][]): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  rows.forEach((row, i) => {
    if (i > 0) keyboard.row();
    for (const b of row) keyboard.text(b.label, encodeCallback(b.action));
  });
  return keyboard;
}

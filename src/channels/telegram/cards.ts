/**
 * A card view (`delivery/cards.ts` writes its words) drawn as Telegram HTML with an inline
 * keyboard. Pure, so a card is tested without a bot.
 */
import { InlineKeyboard } from 'grammy';
import type { Button } from '../../contract/actions.js';
import { type CardLimits, type CardView, renderSpans, type Span, type ViewBlock } from '../../delivery/views.js';
import { encodeCallback } from './callback-data.js';
import { escapeHtml } from './markdown.js';

// Inbound code trims file names with it; one trim for every channel lives with the views.
export { trimText } from '../../delivery/views.js';

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

function blockHtml(b: ViewBlock, nameOf: NameOf): string {
  switch (b.kind) {
    case 'heading':
      return `${escapeHtml(b.icon)} ${spansHtml(b.spans, nameOf)}`;
    case 'text':
      return spansHtml(b.spans, nameOf);
    case 'code':
      return `<pre>${escapeHtml(b.text)}</pre>`;
    case 'quote':
      return `<blockquote>${b.label ? `${escapeHtml(b.label)}: ` : ''}${escapeHtml(b.text)}</blockquote>`;
    case 'hint':
      return `<i>${spansHtml(b.spans, nameOf)}</i>`;
  }
}

/** A view's blocks as Telegram HTML, one line (or `<pre>`) each. */
export function viewHtml(view: CardView, nameOf: NameOf): string {
  return view.blocks.map((b) => blockHtml(b, nameOf)).join('\n');
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

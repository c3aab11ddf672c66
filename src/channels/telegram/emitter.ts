/**
 * Telegram's emitter: delivery content → HTML messages (with inline keyboards on cards), split
 * under Telegram's 4096-character limit (a finished tool's line with its output in an expandable
 * block); answers as rich messages (the model's Markdown, split
 * under the rich limits) while those are in force. Pure, so the wording is tested without a bot.
 */
import type { InlineKeyboard } from 'grammy';
import type { Token } from 'marked';
import { cardEmitter, TITLE_ICON, escapeMarkdown, escapePriceDollars, packMarkdown } from '../../kit/index.js';
import type { Button, ToolContent, Emitter, Part, CardView } from '../../kit/index.js';
import { keyboardOf, type NameOf, TELEGRAM_CARD_LIMITS, toolHtml, trimText, viewHtml } from './cards.js';
import { escapeHtml, tokensToHtmlBlocks } from './markdown.js';
import { RICH_LIMITS, RICH_MAX_CHARS } from './rich.js';
import { htmlToPlain, packBlocks, telegramLimits } from './split.js';

/** A Telegram message body: HTML (or a rich message's Markdown) and its buttons. */
export interface TelegramBody {
  /** Empty for a rich message. */
  html: string;
  /** Set for a rich message: `rich_message.markdown`. */
  markdown?: string;
  keyboard?: InlineKeyboard;
}

function part(html: string, keyboard?: InlineKeyboard): Part {
  return { body: keyboard ? { html, keyboard } : { html }, text: htmlToPlain(html) };
}

function richPart(markdown: string, keyboard?: InlineKeyboard): Part {
  return { body: keyboard ? { html: '', markdown, keyboard } : { html: '', markdown }, text: markdown };
}

/**
 * Build the emitter; `nameOf` shows who requested or decided a card, `rich` says whether answers
 * go as rich messages now (`telegram.rich_messages` and the server's answer so far).
 */
export function telegramEmitter(nameOf: NameOf, rich: () => boolean = () => false): Emitter {
  return {
    markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
      const keyboard = buttons?.length ? keyboardOf(buttons) : undefined;
      if (rich()) {
        const head = title ? `${TITLE_ICON} **${escapeMarkdown(trimText(title, 200))}**` : undefined;
        const texts = packMarkdown(tokens, RICH_LIMITS, head).map((md) => escapePriceDollars(md, RICH_MAX_CHARS));
        return texts.map((md, i) => richPart(md, i === texts.length - 1 ? keyboard : undefined));
      }
      const blocks = tokensToHtmlBlocks(tokens);
      if (title) blocks.unshift(`${TITLE_ICON} <b>${escapeHtml(trimText(title, 200))}</b>`);
      const htmls = packBlocks(blocks, telegramLimits.partUnits);
      return htmls.map((html, i) => part(html, i === htmls.length - 1 ? keyboard : undefined));
    },
    ...cardEmitter(TELEGRAM_CARD_LIMITS, (view: CardView) => [
      part(viewHtml(view, nameOf), view.buttons.length ? keyboardOf(view.buttons) : undefined),
    ]),
    // A finished tool's line carries its output in an expandable block (cards stay HTML).
    tool: (c: ToolContent, tail?: string) => [part(toolHtml(c, nameOf, tail))],
  };
}

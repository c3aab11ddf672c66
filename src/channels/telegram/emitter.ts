/**
 * Telegram's emitter: delivery content → HTML messages (with inline keyboards on cards), split
 * under Telegram's 4096-character limit. Pure, so the wording is tested without a bot.
 */
import type { InlineKeyboard } from 'grammy';
import type { Token } from 'marked';
import type { Button } from '../../contract/actions.js';
import type { Emitter, Part } from '../../contract/surface.js';
import { cardEmitter } from '../../delivery/cards.js';
import { TITLE_ICON } from '../../delivery/notices.js';
import type { CardView } from '../../delivery/views.js';
import { keyboardOf, type NameOf, TELEGRAM_CARD_LIMITS, trimText, viewHtml } from './cards.js';
import { escapeHtml, tokensToHtmlBlocks } from './markdown.js';
import { htmlToPlain, packBlocks, telegramLimits } from './split.js';

/** A Telegram message body: HTML and its buttons. */
export interface TelegramBody {
  html: string;
  keyboard?: InlineKeyboard;
}

function part(html: string, keyboard?: InlineKeyboard): Part {
  return { body: keyboard ? { html, keyboard } : { html }, text: htmlToPlain(html) };
}

/** Build the emitter; `nameOf` shows who requested or decided a card. */
export function telegramEmitter(nameOf: NameOf): Emitter {
  return {
    markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
      const blocks = tokensToHtmlBlocks(tokens);
      if (title) blocks.unshift(`${TITLE_ICON} <b>${escapeHtml(trimText(title, 200))}</b>`);
      const htmls = packBlocks(blocks, telegramLimits.partUnits);
      return htmls.map((html, i) =>
        part(html, i === htmls.length - 1 && buttons?.length ? keyboardOf(buttons) : undefined),
      );
    },
    ...cardEmitter(TELEGRAM_CARD_LIMITS, (view: CardView) => [
      part(viewHtml(view, nameOf), view.buttons.length ? keyboardOf(view.buttons) : undefined),
    ]),
  };
}

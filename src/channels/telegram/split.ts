/**
 * Telegram's side of splitting rendered HTML: its limits, and HTML read as the shared cutter's
 * pieces — measured on the visible text (entities decoded, tags removed) in UTF-16 units, tags
 * closed and reopened at a cut. The packing and cutting policy is shared (`delivery/split.ts`,
 * `delivery/cut.ts`).
 */
import { angleMarkup, cutMarkup, decodeHtmlEntity, visiblePieces, packBlocks as pack } from '../../kit/index.js';
import type { Markup, MessageLimits } from '../../kit/index.js';

/** Telegram's limit for message text. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** What the packer may fill: one part per message, 4000 visible characters (headroom under 4096). */
export const telegramLimits: MessageLimits = { partUnits: 4000, partsPerMessage: 1, messageUnits: 4000 };

/** Our own generated HTML as the cutter's pieces: tags open and close, entities one visible character each. */
const tokenize = angleMarkup({ tags: true, decode: decodeHtmlEntity });

/** Visible text of Telegram HTML: tags dropped, entities decoded. Used for the plain-text fallback. */
export function htmlToPlain(html: string): string {
  return visiblePieces(tokenize(html));
}

/** Visible length (UTF-16 units) of Telegram HTML. */
export function visibleLength(html: string): number {
  return htmlToPlain(html).length;
}

/**
 * Split HTML so each chunk's visible text is at most `limit` characters. Chunks are balanced HTML:
 * tags open at a cut are closed and reopened (the shared cut in `delivery/cut.ts`).
 * @param limit default 4000, leaving headroom under Telegram's 4096.
 */
export function splitHtml(html: string, limit = telegramLimits.partUnits): string[] {
  return cutMarkup(html, limit, tokenize);
}

/** Telegram HTML blocks for the packer: measured in visible characters, cut by {@link splitHtml}. */
const telegramHtml: Markup<string> = {
  measure: visibleLength,
  join: (a, b) => (a ? `${a}\n\n${b}` : b),
  separatorUnits: 2,
  cut: splitHtml,
};

/**
 * Pack rendered blocks into as few messages as fit, joining blocks with a blank line; a block
 * too long on its own is split with {@link splitHtml}.
 */
export function packBlocks(blocks: string[], limit = telegramLimits.partUnits): string[] {
  const out = pack(blocks, limit, telegramHtml).filter((html) => html !== '');
  // A part of nothing but whitespace would be an empty message, which Telegram refuses.
  if (out.length && !out.at(-1)?.trim()) out.pop();
  return out;
}

/**
 * Rendered blocks (`markup.ts`) as the packer's markup (`split.ts`) for a dialect whose code
 * blocks are ``` fences, as Slack's mrkdwn and Discord's Markdown are: measured in characters,
 * joined by a blank line, text cut by the dialect's tokenizer, and a code block cut into fenced
 * pieces that each reopen its fence, language and all.
 */
import { cutMarkup, type Piece, type Tokenizer } from './cut.js';
import type { MarkupBlock } from './markup.js';
import type { Markup } from './split.js';

const CLOSE = '\n```';

/** A fenced block as the cutter's pieces: its opening line opens a construct a cut closes and reopens. */
export function fencePieces(text: Tokenizer): Tokenizer {
  return (fenced): Piece[] => {
    const open = fenced.slice(0, fenced.indexOf('\n') + 1);
    return [
      { kind: 'open', name: 'fence', raw: open, closer: CLOSE },
      ...text(fenced.slice(open.length, -CLOSE.length)),
      { kind: 'close', name: 'fence', raw: CLOSE },
    ];
  };
}

/** Text cut into parts of at most `max`; outside a code block whitespace at a cut shows as nothing, so it is dropped. */
export function cutText(text: string, max: number, pieces: Tokenizer): string[] {
  return cutMarkup(text, max, pieces).map((piece) => piece.replace(/\s+$/, ''));
}

/**
 * A fenced block cut into fenced blocks of at most `max` characters each, fences included.
 * @param reserve characters kept for the fences every piece carries (default: this block's own).
 */
export function cutFenced(fenced: string, max: number, pieces: Tokenizer, reserve?: number): string[] {
  const fences = reserve ?? fenced.indexOf('\n') + 1 + CLOSE.length;
  return cutMarkup(fenced, max - fences, fencePieces(pieces));
}

/**
 * Text cut to at most `max` characters, ending in "…", at the cutter's place (a blank line, a
 * line, a space; never inside an atomic piece); text within `max` is returned as it is.
 */
export function clipCut(text: string, max: number, pieces: Tokenizer): string {
  if (text.length <= max) return text;
  // The first piece never reaches past twice its size (an atomic piece that long is cut like text): read no further.
  return `${cutText(text.slice(0, 2 * max), max - 1, pieces)[0] ?? ''}…`;
}

/** The packer's markup of fenced-dialect blocks; `reserve` as for {@link cutFenced}. */
export function fencedMarkup(pieces: Tokenizer, reserve?: number): Markup<MarkupBlock> {
  return {
    measure: (block) => block.text.length,
    join: (a, b) => (a.text ? { kind: 'text', text: `${a.text}\n\n${b.text}` } : b),
    separatorUnits: 2,
    cut: (block, max) =>
      (block.kind === 'code' ? cutFenced(block.text, max, pieces, reserve) : cutText(block.text, max, pieces)).map(
        (text) => ({ kind: block.kind, text }),
      ),
  };
}

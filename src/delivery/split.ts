/**
 * The block packer every channel's emitter uses: rendered blocks (paragraphs, lists, tables, code
 * blocks) → message parts within the limits the channel declares. The policy lives here: join
 * whole blocks with a blank line while they fit; cut a block too long on its own at a paragraph,
 * then a line, then a space; give each piece of a cut code block its own fence; group parts into
 * messages. What a unit is (Telegram counts visible characters of HTML, Slack characters of
 * mrkdwn) stays in the channel's format code ({@link Markup}); the cut of one long block of markup,
 * closing and reopening what is open, is `cut.ts`. `splitText` and `splitFenced` cut plain text.
 */

/** The sizes a channel declares for its messages, in the units its {@link Markup.measure} counts. */
export interface MessageLimits {
  /** Units in one part (Telegram: one message's text; Slack: one section block's text). */
  partUnits: number;
  /** Parts in one message (Telegram 1; Slack 50 blocks). */
  partsPerMessage: number;
  /** Units in one message, all its parts together. */
  messageUnits: number;
}

/** How a channel measures, joins and cuts its rendered blocks. */
export interface Markup<B> {
  /** Size of a block in the channel's units. */
  measure(block: B): number;
  /** Two blocks as one, separated by a blank line. */
  join(a: B, b: B): B;
  /**
   * Units the blank line of a {@link join} takes, when a join of blocks that show something
   * measures exactly the sum (the packer then measures each block once instead of each join).
   */
  separatorUnits?: number;
  /** A block longer than `limit` cut into pieces of at most `limit`, each valid markup on its own. */
  cut(block: B, limit: number): B[];
}

/** Where a cut may fall, best first: after a blank line, after a line, after a space. */
export const BREAKS = ['\n\n', '\n', ' '] as const;

/**
 * The first usable cut of `candidates` (given best first, e.g. paragraph, line, space): one past
 * `min`, so a cut never leaves a uselessly short piece. -1 when none is.
 */
export function pickCut(candidates: readonly number[], min: number): number {
  for (const c of candidates) if (c > min) return c;
  return -1;
}

/**
 * Index at which to cut `text` so the first piece has at most `max` characters: after the last
 * {@link BREAKS} separator past a quarter of `max`; failing that `hardCut(text, max)` (the
 * channel's choice of a place that splits no escape sequence), or `max`.
 */
export function cutIndex(text: string, max: number, hardCut?: (text: string, max: number) => number): number {
  if (text.length <= max) return text.length;
  const window = text.slice(0, max);
  for (const sep of BREAKS) {
    const at = window.lastIndexOf(sep);
    if (at > max / 4) return at + sep.length;
  }
  const hard = hardCut ? hardCut(window, max) : max;
  return hard > 0 ? hard : max;
}

/**
 * Plain text cut into pieces of at most `max` characters (see {@link cutIndex}). Whitespace at a
 * cut is dropped: it would show as a blank line at the end or start of a part.
 */
export function splitText(text: string, max: number, hardCut?: (text: string, max: number) => number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const cut = cutIndex(rest, max, hardCut);
    const piece = rest.slice(0, cut).replace(/\s+$/, '');
    if (piece) out.push(piece);
    rest = rest.slice(cut).replace(/^\n+/, '');
  }
  if (rest.trim()) out.push(rest);
  return out;
}

/**
 * The body of a code block cut into pieces that each fit `max` once wrapped in `open` … `close`,
 * cut between lines (a line longer than a piece is cut hard: code has no better boundary), and
 * returned wrapped, so every piece is a whole code block.
 */
export function splitFenced(
  body: string,
  max: number,
  fence: { open: string; close: string },
  hardCut?: (text: string, max: number) => number,
): string[] {
  const { open, close } = fence;
  const room = max - open.length - close.length;
  const chunks: string[] = [];
  let current = '';
  for (const rawLine of body.split('\n')) {
    for (const line of rawLine.length > room ? splitText(rawLine, room, hardCut) : [rawLine]) {
      const candidate = current ? `${current}\n${line}` : line;
      if (candidate.length > room && current) {
        chunks.push(current);
        current = line;
      } else current = candidate;
    }
  }
  if (current || chunks.length === 0) chunks.push(current);
  return chunks.map((c) => `${open}${c}${close}`);
}

/**
 * Blocks packed into as few parts of at most `limit` units as fit. Whole blocks are joined while
 * they fit; a block too long on its own is cut by the markup, its pieces stand alone, and the last
 * piece may take the blocks after it.
 */
export function packBlocks<B>(blocks: readonly B[], limit: number, markup: Markup<B>): B[] {
  const out: B[] = [];
  let current: B | undefined;
  let size = 0;
  for (const block of blocks) {
    const blockSize = markup.measure(block);
    if (current === undefined) {
      if (blockSize <= limit) {
        current = block;
        size = blockSize;
        continue;
      }
    } else {
      // With a known separator a join is measured by adding (re-measuring it would read the part again per block).
      const sum = markup.separatorUnits !== undefined && size > 0 ? size + markup.separatorUnits + blockSize : undefined;
      const joined = sum === undefined ? markup.join(current, block) : undefined;
      const joinedSize = sum ?? markup.measure(joined as B);
      if (joinedSize <= limit) {
        current = joined ?? markup.join(current, block);
        size = joinedSize;
        continue;
      }
      out.push(current);
      current = undefined;
      if (blockSize <= limit) {
        current = block;
        size = blockSize;
        continue;
      }
    }
    const pieces = markup.cut(block, limit);
    current = pieces.pop();
    size = current === undefined ? 0 : markup.measure(current);
    out.push(...pieces);
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** Parts grouped into messages of at most `partsPerMessage` parts and `messageUnits` units. */
export function groupParts<B>(parts: readonly B[], limits: MessageLimits, measure: (part: B) => number): B[][] {
  const messages: B[][] = [];
  let message: B[] = [];
  let units = 0;
  for (const part of parts) {
    const size = measure(part);
    if (message.length && (message.length >= limits.partsPerMessage || units + size > limits.messageUnits)) {
      messages.push(message);
      message = [];
      units = 0;
    }
    message.push(part);
    units += size;
  }
  if (message.length) messages.push(message);
  return messages;
}

/** Blocks → messages within `limits`: {@link packBlocks}, then {@link groupParts}. */
export function packMessages<B>(blocks: readonly B[], limits: MessageLimits, markup: Markup<B>): B[][] {
  return groupParts(packBlocks(blocks, limits.partUnits, markup), limits, markup.measure);
}

/**
 * The block packer every channel's emitter uses: rendered blocks (paragraphs, lists, tables, code
 * blocks) → message parts within the limits the channel declares. The policy lives here: join
 * whole blocks with a blank line while they fit; hand a block too long on its own to the markup's
 * cut; group parts into messages. What a unit is (Telegram counts visible characters of HTML, Slack characters of
 * mrkdwn) stays in the channel's format code ({@link Markup}); the cut of one long block of markup,
 * closing and reopening what is open, is `cut.ts`.
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

/**
 * The first usable cut of `candidates` (given best first, e.g. paragraph, line, space): one past
 * `min`, so a cut never leaves a uselessly short piece. -1 when none is.
 */
export function pickCut(candidates: readonly number[], min: number): number {
  for (const c of candidates) if (c > min) return c;
  return -1;
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
      const sum =
        markup.separatorUnits !== undefined && size > 0 ? size + markup.separatorUnits + blockSize : undefined;
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

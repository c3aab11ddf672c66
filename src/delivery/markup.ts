/**
 * One walker over `marked`'s token tree for every channel whose platform speaks its own markup
 * (Telegram HTML, Slack mrkdwn). The walker knows Markdown's structure — paragraphs, headings,
 * emphasis, code, links, images, quotes, nested and task lists, tables, rules, raw HTML, and the
 * half-written Markdown of a reply still streaming in — and asks a {@link Dialect} only for what a
 * platform spells its own way: escaping, the marks, what a link, a quote or a table becomes.
 * Every text node goes through the dialect's `escape`; raw HTML in the input is shown as text.
 */
import type { Token, Tokens } from 'marked';

/** A list item as a dialect sees it when choosing its marker. */
export interface ListMarker {
  ordered: boolean;
  /** The item's number (ordered lists count from their `start`). */
  number: number;
  /** Nesting depth, 0 for a top-level list. */
  depth: number;
  /** Set for a GFM task item: whether its box is ticked. */
  checked?: boolean;
}

/** How a dialect marks list items, for {@link listMarker}. */
export interface MarkerStyle {
  /** A task item's box: ticked, then not. */
  boxes: readonly [string, string];
  /** Bullets of unordered items by depth, repeating (default `•` at every depth). */
  bullets?: readonly string[];
  /** What follows an ordered item's number (default `.`). */
  dot?: string;
  /** Whether a task item keeps its bullet with the box after it (default: the box stands instead). */
  boxAfterBullet?: boolean;
}

/** A {@link Dialect}'s list marker from its style: a number and dot, a bullet by depth, or a task box. */
export function listMarker(style: MarkerStyle): (item: ListMarker) => string {
  const bullets = style.bullets ?? ['•'];
  return (item) => {
    const bullet = item.ordered
      ? `${item.number}${style.dot ?? '.'}`
      : (bullets[item.depth % bullets.length] as string);
    if (item.checked === undefined) return bullet;
    const box = style.boxes[item.checked ? 0 : 1];
    return style.boxAfterBullet ? `${bullet} ${box}` : box;
  };
}

/** What one platform's markup says differently; everything else is the walker's. */
export interface Dialect {
  /** Text made safe to show as itself. */
  escape(text: string): string;
  /** Rendered inline content made bold, italic or struck through. */
  strong(inner: string): string;
  em(inner: string): string;
  del(inner: string): string;
  /** A heading's rendered content (no platform here has headings of its own). */
  heading(inner: string): string;
  /** An inline code span (`code` is the raw text, not yet escaped). */
  codespan(code: string): string;
  /** A link; `label` is rendered inline content, empty when the link has none. The dialect applies its link safety rules. */
  link(href: string, label: string): string;
  /** The label of an image without alt text (an image is shown as a link); default: its address. */
  untitledImage?: string;
  /** A fenced or indented code block (raw text; `language` is the info string's first word, maybe empty). */
  code(text: string, language: string): string;
  /** A table, given its cells as plain text (header row first) and its column alignment. */
  table(rows: string[][], align: Tokens.Table['align']): string;
  /** A block quote of rendered blocks; `nested` when it sits inside another quote. */
  quote(blocks: string[], nested: boolean): string;
  /** Whether blocks inside a quote keep the list depth around it (else lists in it start at 0). */
  quoteKeepsDepth: boolean;
  /** A raw HTML block, shown as text. */
  htmlBlock(text: string): string;
  /** A horizontal rule. */
  hr: string;
  /** How lists are laid out. */
  list: {
    /** Indentation per nesting level. */
    indent: string;
    /** The item's marker (bullet, number, task box), written before its first block. */
    marker(item: ListMarker): string;
    /** What starts an item's second and later blocks (not nested lists), at the item's depth. */
    continuation(depth: number): string;
    /** Whether a nested list that is an item's first child still starts on its own line. */
    nestedOnOwnLine: boolean;
  };
}

/** One rendered top-level block; `code` blocks (code and tables) are one monospace unit. */
export interface MarkupBlock {
  kind: 'text' | 'code';
  text: string;
}

interface Where {
  depth: number;
  inQuote: boolean;
}

const TOP: Where = { depth: 0, inQuote: false };

/** Render inline tokens. */
export function inline(d: Dialect, tokens: Token[] | undefined): string {
  if (!tokens) return '';
  let out = '';
  for (const t of tokens) out += inlineToken(d, t);
  return out;
}

function inlineToken(d: Dialect, t: Token): string {
  switch (t.type) {
    case 'text': {
      const tt = t as Tokens.Text;
      return tt.tokens ? inline(d, tt.tokens) : d.escape(tt.text);
    }
    case 'escape':
      return d.escape((t as Tokens.Escape).text);
    case 'strong':
      return d.strong(inline(d, (t as Tokens.Strong).tokens));
    case 'em':
      return d.em(inline(d, (t as Tokens.Em).tokens));
    case 'del':
      return d.del(inline(d, (t as Tokens.Del).tokens));
    case 'codespan':
      return d.codespan((t as Tokens.Codespan).text);
    case 'br':
      return '\n';
    case 'link': {
      const l = t as Tokens.Link;
      return d.link(l.href, inline(d, l.tokens));
    }
    case 'image': {
      const im = t as Tokens.Image;
      return d.link(im.href, d.escape(im.text || (d.untitledImage ?? im.href)));
    }
    case 'html':
      // Raw HTML from the model is shown as text: no platform here would take it as markup.
      return d.escape((t as Tokens.HTML).text);
    default:
      return fallback(d, t);
  }
}

/** A token this walker does not know (a parser extension): its content, or its source, as text. */
function fallback(d: Dialect, t: Token): string {
  const g = t as Tokens.Generic;
  if (g.tokens) return inline(d, g.tokens);
  return d.escape(typeof g.text === 'string' ? g.text : typeof g.raw === 'string' ? g.raw : '');
}

/** Plain text of inline tokens, without any markup (table cells, whose width is measured). */
export function plainText(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  let out = '';
  for (const t of tokens) {
    const g = t as Tokens.Generic;
    if (t.type === 'br') out += ' ';
    else if (g.tokens && t.type !== 'codespan') out += plainText(g.tokens);
    else out += typeof g.text === 'string' ? g.text : g.raw;
  }
  return out;
}

/**
 * A table's cells laid out as a monospace grid: columns padded to their widest cell (at most
 * `maxWidth`), `|` between cells, a `-+-` rule under the header. `align` right- or centre-aligns
 * columns; without it every cell is left-aligned.
 */
export function gridText(rows: string[][], align?: Tokens.Table['align'], maxWidth = Number.POSITIVE_INFINITY): string {
  const [head = [], ...body] = rows;
  const widths = head.map((_, c) => Math.min(maxWidth, Math.max(...rows.map((r) => (r[c] ?? '').length))));
  const line = (r: string[]) =>
    r
      .map((cell, c) => {
        const w = widths[c] ?? cell.length;
        const a = align?.[c];
        if (a === 'right') return cell.padStart(w);
        if (a === 'center') return cell.padStart(Math.floor((w + cell.length) / 2)).padEnd(w);
        return cell.padEnd(w);
      })
      .join(' | ')
      .trimEnd();
  const sep = widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-+-');
  return [line(head), sep, ...body.map(line)].join('\n');
}

/**
 * A table as a {@link gridText} grid of one-line cells: each cell through `clean` (by default as
 * it is), its line breaks as spaces — for dialects whose table is a monospace grid.
 */
export function lineGrid(
  rows: string[][],
  align?: Tokens.Table['align'],
  clean: (cell: string) => string = (c) => c,
): string {
  return gridText(
    rows.map((r) => r.map((c) => clean(c).replace(/\n/g, ' '))),
    align,
  );
}

/** A quote's blocks (a blank line between them) with `prefix` before every line: a plain-text blockquote. */
export function prefixLines(blocks: string[], prefix: string): string {
  return blocks
    .join('\n\n')
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

function list(d: Dialect, t: Tokens.List, at: Where): string {
  const { indent, marker, continuation, nestedOnOwnLine } = d.list;
  const pad = indent.repeat(at.depth);
  const inner: Where = { depth: at.depth + 1, inQuote: at.inQuote };
  const start = typeof t.start === 'number' ? t.start : 1;
  return t.items
    .map((item, i) => {
      const mark = marker({
        ordered: t.ordered,
        number: start + i,
        depth: at.depth,
        ...(item.task ? { checked: !!item.checked } : {}),
      });
      let body = '';
      let first = true;
      for (const child of item.tokens) {
        if (child.type === 'checkbox') continue;
        if (child.type === 'list') {
          const nested = list(d, child as Tokens.List, inner);
          body += first && !nestedOnOwnLine ? nested : `\n${nested}`;
        } else {
          const text = block(d, child, inner).text;
          if (!text) continue;
          body += first ? text : `\n${continuation(at.depth)}${text}`;
        }
        first = false;
      }
      return `${pad}${mark} ${body}`;
    })
    .join('\n');
}

function block(d: Dialect, t: Token, at: Where): MarkupBlock {
  switch (t.type) {
    case 'space':
    case 'def':
      return { kind: 'text', text: '' };
    case 'heading':
      return { kind: 'text', text: d.heading(inline(d, (t as Tokens.Heading).tokens)) };
    case 'paragraph':
      return { kind: 'text', text: inline(d, (t as Tokens.Paragraph).tokens) };
    case 'text': {
      const tt = t as Tokens.Text;
      return { kind: 'text', text: tt.tokens ? inline(d, tt.tokens) : d.escape(tt.text) };
    }
    case 'code': {
      const c = t as Tokens.Code;
      return { kind: 'code', text: d.code(c.text, (c.lang ?? '').trim().split(/\s+/)[0] ?? '') };
    }
    case 'table': {
      const tb = t as Tokens.Table;
      const cells = (row: Tokens.TableCell[]) => row.map((c) => plainText(c.tokens));
      return { kind: 'code', text: d.table([cells(tb.header), ...tb.rows.map(cells)], tb.align) };
    }
    case 'list':
      return { kind: 'text', text: list(d, t as Tokens.List, at) };
    case 'blockquote': {
      const within: Where = { depth: d.quoteKeepsDepth ? at.depth : 0, inQuote: true };
      const inner = blocks(d, (t as Tokens.Blockquote).tokens, within).map((b) => b.text);
      return { kind: 'text', text: d.quote(inner, at.inQuote) };
    }
    case 'hr':
      return { kind: 'text', text: d.hr };
    case 'html':
      return { kind: 'text', text: d.htmlBlock((t as Tokens.HTML).text) };
    default:
      return { kind: 'text', text: fallback(d, t) };
  }
}

function blocks(d: Dialect, tokens: Token[], at: Where): MarkupBlock[] {
  const out: MarkupBlock[] = [];
  for (const t of tokens) {
    const b = block(d, t, at);
    if (b.text.length > 0) out.push(b);
  }
  return out;
}

/**
 * Parsed Markdown rendered in `dialect`, one entry per top-level block (empty ones dropped), for
 * the packer in `split.ts` to join and cut within a platform's limits.
 */
export function renderBlocks(dialect: Dialect, tokens: Token[]): MarkupBlock[] {
  return blocks(dialect, tokens, TOP);
}

/**
 * Text that cannot close a ``` fence early: each run of three backticks gets a zero-width space
 * inside it, which looks the same (for dialects whose fence is always three backticks).
 */
export function breakFences(text: string): string {
  return text.replace(/```/g, '``\u200b`');
}

/** Code in a ``` fence it cannot close early ({@link breakFences}), its trailing newlines dropped. */
export function fenceCode(code: string, language = ''): string {
  return `\`\`\`${language}\n${breakFences(code.replace(/\n+$/, ''))}\n\`\`\``;
}

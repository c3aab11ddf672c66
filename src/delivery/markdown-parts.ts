/**
 * Model Markdown kept as Markdown, for platforms that render GitHub-flavoured Markdown themselves
 * (Telegram's rich messages): the parsed top-level blocks packed into as few messages as the
 * platform's limits allow — characters, blocks (nested ones, list items and table rows count) and
 * table columns. Like the HTML packer (`split.ts`) it joins whole blocks while they fit and cuts
 * only a block too big on its own: a code block into fenced pieces of whole lines with its
 * language, a table into row groups that each repeat the header, anything else at a blank line,
 * a line or a space. A table wider than the column limit becomes a monospace grid.
 */
import type { Token, Tokens } from 'marked';
import { gridText } from './markup.js';
import { pickCut } from './split.js';

/** The limits of one Markdown message. */
export interface MarkdownLimits {
  /** Characters in one message (UTF-16 units, never fewer than the platform's code points). */
  chars: number;
  /** Blocks in one message, nested ones included. */
  blocks: number;
  /** Columns in one table. */
  tableColumns: number;
}

interface Block {
  text: string;
  blocks: number;
}

const SEPARATOR = '\n\n';

/** How many blocks a parsed token counts as: itself, its list items, table rows and nested blocks. */
export function blockCount(token: Token): number {
  switch (token.type) {
    case 'space':
      return 0;
    case 'list':
      return 1 + (token as Tokens.List).items.reduce((n, item) => n + 1 + nested(item.tokens), 0);
    case 'table':
      return 2 + (token as Tokens.Table).rows.length;
    case 'blockquote':
      return 1 + nested((token as Tokens.Blockquote).tokens);
    default:
      return 1;
  }
}

function nested(tokens: Token[] | undefined): number {
  // A list item's own text is its block; only block children beyond it count.
  return (tokens ?? []).filter((t) => t.type !== 'text' && t.type !== 'space').reduce((n, t) => n + blockCount(t), 0);
}

/** A fenced code block whose fence the code cannot close early. */
function fence(code: string, lang: string): string {
  const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${lang}\n${code}\n${ticks}`;
}

/** Escape text so Markdown shows it as written (a title, a cell of a grid). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~=]/g, '\\$&');
}

/** One parsed block as Markdown the platform renders safely. */
function blockOf(token: Token, limits: MarkdownLimits): Block | null {
  switch (token.type) {
    case 'space':
      return null;
    case 'table': {
      const t = token as Tokens.Table;
      if (t.header.length <= limits.tableColumns) return { text: t.raw.trim(), blocks: blockCount(t) };
      const rows = [t.header, ...t.rows].map((r) => r.map((c) => c.text.trim()));
      return { text: fence(gridText(rows, t.align), ''), blocks: 1 };
    }
    case 'html':
      // Raw HTML would be read as the platform's own tags: shown as text, as the HTML dialect does.
      return { text: token.raw.trimEnd().replace(/&/g, '&amp;').replace(/</g, '&lt;'), blocks: 1 };
    default: {
      const text = token.raw.replace(/^\n+/, '').trimEnd();
      return text ? { text, blocks: blockCount(token) } : null;
    }
  }
}

/** Lines packed into groups of at most `chars` characters and `lines` lines (a longer line is cut). */
function lineGroups(lines: string[], chars: number, maxLines: number): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let size = 0;
  for (let line of lines) {
    while (line.length > chars) {
      if (cur.length) out.push(cur);
      cur = [];
      size = 0;
      out.push([line.slice(0, chars)]);
      line = line.slice(chars);
    }
    if (cur.length && (size + 1 + line.length > chars || cur.length >= maxLines)) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    size += (cur.length ? 1 : 0) + line.length;
    cur.push(line);
  }
  if (cur.length) out.push(cur);
  return out;
}

/** A block too big for one message, cut into pieces that each fit and render on their own. */
function cutBlock(token: Token, block: Block, limits: MarkdownLimits): Block[] {
  const room = limits.blocks - 2;
  if (token.type === 'code') {
    const { text, lang = '' } = token as Tokens.Code;
    const overhead = fence(text, lang).length - text.length;
    return lineGroups(text.split('\n'), limits.chars - overhead, Number.POSITIVE_INFINITY).map((g) => ({
      text: fence(g.join('\n'), lang),
      blocks: 1,
    }));
  }
  if (token.type === 'table' && block.blocks > 1) {
    const [head = '', rule = '', ...rows] = block.text.split('\n');
    const headSize = head.length + rule.length + 2;
    return lineGroups(rows, limits.chars - headSize, room - 2).map((g) => ({
      text: [head, rule, ...g].join('\n'),
      blocks: 2 + g.length,
    }));
  }
  // Prose, lists, quotes: at a blank line, a line or a space, each piece counted line by line.
  const pieces: Block[] = [];
  let rest = block.text;
  while (rest.length > limits.chars || rest.split('\n').length > room) {
    let end = Math.min(rest.length, limits.chars);
    const lineEnds = [...rest.slice(0, end).matchAll(/\n/g)].map((m) => m.index ?? 0);
    if (lineEnds.length >= room) end = lineEnds[room - 1] ?? end;
    const window = rest.slice(0, end);
    const cut =
      end === rest.length
        ? end
        : pickCut([window.lastIndexOf('\n\n'), window.lastIndexOf('\n'), window.lastIndexOf(' ')], end / 2);
    const at = cut > 0 ? cut : end;
    pieces.push({ text: rest.slice(0, at).trimEnd(), blocks: rest.slice(0, at).split('\n').length });
    rest = rest.slice(at).replace(/^\s+/, '');
  }
  if (rest) pieces.push({ text: rest, blocks: rest.split('\n').length });
  return pieces;
}

/**
 * Parsed Markdown as messages of Markdown within `limits`, in order; `head` (a title already in
 * Markdown) opens the first. Empty when there is nothing to show.
 */
export function packMarkdown(tokens: Token[], limits: MarkdownLimits, head?: string): string[] {
  const blocks: Block[] = head ? [{ text: head, blocks: 1 }] : [];
  for (const token of tokens) {
    const block = blockOf(token, limits);
    if (!block) continue;
    if (block.text.length <= limits.chars && block.blocks <= limits.blocks) blocks.push(block);
    else blocks.push(...cutBlock(token, block, limits));
  }
  const out: string[] = [];
  let cur: Block | null = null;
  for (const block of blocks) {
    if (
      cur &&
      cur.text.length + SEPARATOR.length + block.text.length <= limits.chars &&
      cur.blocks + block.blocks <= limits.blocks
    ) {
      cur = { text: cur.text + SEPARATOR + block.text, blocks: cur.blocks + block.blocks };
      continue;
    }
    if (cur) out.push(cur.text);
    cur = block;
  }
  if (cur?.text.trim()) out.push(cur.text);
  return out;
}

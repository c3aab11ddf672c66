/**
 * Long or structured answers as Slack `markdown` blocks: Slack renders the model's standard
 * Markdown itself (real headings, nested lists, code blocks, links) instead of our mrkdwn
 * imitation. Block Kit takes at most 12 000 characters in one markdown block and in all of a
 * message's markdown blocks together; a message with them is kept within 12 000 characters in
 * all (the emitter). Short plain prose stays a mrkdwn section: it reads the same
 * either way and sections are what every client shows.
 *
 * A message that carries markdown blocks can be drawn again as sections ({@link asSections}) when
 * a workspace refuses them (`invalid_blocks`); the surface does that, once for the run.
 */
import type { Token } from 'marked';
import { escapeMarkdown, packMarkdown, TITLE_ICON } from '../../kit/index.js';
import { markdownToSegments } from './mrkdwn.js';
import { SLACK_LIMITS, splitForSlack } from './split.js';
import { type TableBlock, tableChars } from './table.js';

/** Block Kit's markdown block limit: characters in one block, and in all of a message's markdown blocks. */
export const MARKDOWN_BLOCK_CHARS = 12_000;

/** Slack's markdown block (a type alias, so it is assignable to a loose block record). */
export type MarkdownBlock = { type: 'markdown'; text: string };

/** Top-level Markdown that mrkdwn only imitates: headings, lists, code blocks, quotes, rules. */
const STRUCTURE = new Set(['heading', 'list', 'code', 'blockquote', 'hr']);

/**
 * Whether a run of text reads better as markdown blocks: it has structure mrkdwn only imitates,
 * or it is longer than one section (sections would cut it into separately spaced blocks).
 */
export function prefersMarkdown(tokens: Token[]): boolean {
  if (tokens.some((t) => STRUCTURE.has(t.type))) return true;
  return tokens.reduce((n, t) => n + t.raw.length, 0) > SLACK_LIMITS.sectionChars;
}

/**
 * A run of text as markdown blocks of at most 12 000 characters each (a code block cut into fenced
 * pieces with its language; a table in the run — one over the table block's limits — a monospace
 * grid, as on sections). `title` opens the first in bold.
 */
export function markdownBlocks(tokens: Token[], title?: string): MarkdownBlock[] {
  const head = title ? `${TITLE_ICON} **${escapeMarkdown(title)}**` : undefined;
  // No block count applies to a markdown block; a table column limit of 0 makes every table a grid.
  return packMarkdown(tokens, { chars: MARKDOWN_BLOCK_CHARS, blocks: 100_000, tableColumns: 0 }, head).map(
    (text): MarkdownBlock => ({ type: 'markdown', text }),
  );
}

/** Characters of a message's markdown blocks together (Block Kit's cumulative limit). */
export function markdownChars(blocks: ReadonlyArray<Record<string, unknown>>): number {
  return blocks.reduce((n, b) => n + (b.type === 'markdown' ? String(b.text ?? '').length : 0), 0);
}

/** Characters blocks hold: sections' and markdown blocks' text, tables' cells (a message's limit). */
export function blockChars(blocks: ReadonlyArray<Record<string, unknown>>): number {
  return blocks.reduce((n, b) => {
    if (b.type === 'table') return n + tableChars(b as TableBlock);
    const text = b.text as { text?: string } | string | undefined;
    return n + (typeof text === 'string' ? text.length : (text?.text?.length ?? 0));
  }, 0);
}

/** Whether a message carries markdown blocks. */
export function hasMarkdown(blocks: ReadonlyArray<Record<string, unknown>>): boolean {
  return blocks.some((b) => b.type === 'markdown');
}

/**
 * The same blocks with each markdown block drawn as mrkdwn sections; null when that no longer fits
 * one message (50 blocks, 40 000 characters): the answer must be rendered again, split.
 */
export function asSections(blocks: ReadonlyArray<Record<string, unknown>>): Array<Record<string, unknown>> | null {
  const out: Array<Record<string, unknown>> = [];
  for (const b of blocks) {
    if (b.type !== 'markdown') out.push(b);
    else for (const part of splitForSlack(markdownToSegments(String(b.text ?? '')))) out.push(...part.blocks);
  }
  return out.length <= SLACK_LIMITS.blocksPerMessage && blockChars(out) <= SLACK_LIMITS.messageChars ? out : null;
}

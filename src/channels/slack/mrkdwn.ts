/**
 * Model Markdown → Slack mrkdwn, Slack's dialect of the shared walker (`delivery/markup.ts`):
 * `*bold*`, `_italic_`, `~strike~`, `<url|text>`, no headings or tables, and `&`, `<`, `>` escaped
 * everywhere (Slack reads `<…>` as a link or mention). One segment per top-level block, for the splitter.
 */
import { lexer, type Token } from 'marked';
import { breakFences, fenceCode as fenced, lineGrid, listMarker, prefixLines, renderBlocks } from '../../kit/index.js';
import type { Dialect, MarkupBlock } from '../../kit/index.js';

/** One top-level block of rendered mrkdwn. `code` segments are whole fenced blocks. */
export type MrkdwnSegment = MarkupBlock;

/** Escape the three characters Slack treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Wrap code in a fence (mrkdwn's have no language); the content is escaped and cannot close the fence early. */
export function fenceCode(code: string): string {
  return fenced(escapeMrkdwn(code));
}

function wrap(mark: string, inner: string): string {
  const trimmed = inner.trim();
  if (!trimmed) return inner;
  // Slack only formats when the marks hug the text; keep surrounding spaces outside.
  const lead = inner.slice(0, inner.indexOf(trimmed));
  const tail = inner.slice(lead.length + trimmed.length);
  return `${lead}${mark}${trimmed}${mark}${tail}`;
}

function link(href: string, text: string): string {
  // `|` and `>` end the link in Slack's syntax; escape the URL the same way as text.
  const url = escapeMrkdwn(href).replace(/\|/g, '%7C');
  const label = text.replace(/\|/g, '¦');
  if (!label || label === url) return `<${url}>`;
  return `<${url}|${label}>`;
}

const slack: Dialect = {
  escape: escapeMrkdwn,
  strong: (inner) => wrap('*', inner),
  em: (inner) => wrap('_', inner),
  del: (inner) => wrap('~', inner),
  heading: (inner) => wrap('*', inner),
  codespan(code) {
    if (!code.length) return '';
    // Inline code ends at the next backtick and mrkdwn has no escape for one. A preformatted
    // span (```…```) ends only at three, so a code span holding a backtick keeps every character.
    // Zero-width spaces keep a backtick at either end from merging with the fence.
    if (code.includes('`')) return '```\u200b' + breakFences(escapeMrkdwn(code)) + '\u200b```';
    return '`' + escapeMrkdwn(code) + '`';
  },
  link,
  // mrkdwn code blocks have no language.
  code: (text) => fenceCode(text),
  // Slack has no tables: a monospaced grid in a code block keeps the columns readable.
  table: (rows, align) => fenceCode(lineGrid(rows, align)),
  quote: (blocks) => prefixLines(blocks, '> '),
  quoteKeepsDepth: true,
  htmlBlock: (text) => escapeMrkdwn(text.trim()),
  hr: '────────',
  list: {
    indent: '    ',
    marker: listMarker({ boxes: ['☑', '☐'], bullets: ['•', '◦'], boxAfterBullet: true }),
    continuation: () => '',
    nestedOnOwnLine: false,
  },
};

/** Render Markdown to mrkdwn segments (empty blocks dropped). */
export function markdownToSegments(markdown: string): MrkdwnSegment[] {
  return tokensToSegments(lexer(markdown));
}

/** Render already parsed Markdown (the presenter parses once for every platform). */
export function tokensToSegments(tokens: Token[]): MrkdwnSegment[] {
  return renderBlocks(slack, tokens).filter((s) => s.text.trim().length > 0);
}

/** Render Markdown to one mrkdwn string (blocks separated by a blank line). */
export function markdownToMrkdwn(markdown: string): string {
  return markdownToSegments(markdown)
    .map((s) => s.text)
    .join('\n\n');
}

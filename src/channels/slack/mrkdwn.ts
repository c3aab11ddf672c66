/**
 * Model Markdown → Slack mrkdwn, through `marked`'s lexer (a real parser, not regexes).
 *
 * Slack mrkdwn differs from Markdown: `*bold*`, `_italic_`, `~strike~`, links `<url|text>`, no
 * headings and no tables. `&`, `<` and `>` must be escaped everywhere (Slack reads `<…>` as a
 * link or mention). The output is a list of segments — one per top-level Markdown block — so the
 * splitter can cut at block and line boundaries and treat code blocks as a unit.
 */
import { lexer, type Token, type Tokens } from 'marked';

/** One top-level block of rendered mrkdwn. `code` segments are whole fenced blocks. */
export interface MrkdwnSegment {
  kind: 'text' | 'code';
  /** Rendered mrkdwn; for `code`, including the opening and closing fence. */
  text: string;
}

/** Escape the three characters Slack treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Make text safe inside a ``` fence: a run of three backticks would close the block early, so a
 * zero-width space is put between the backticks (it looks the same and never closes the fence).
 */
export function neutraliseFence(text: string): string {
  return text.replace(/```/g, '``\u200b`');
}

/** Wrap code in a fence; the content is escaped and cannot close the fence early. */
export function fenceCode(code: string): string {
  const body = neutraliseFence(escapeMrkdwn(code.replace(/\n+$/, '')));
  return '```\n' + body + '\n```';
}

function inline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens.map(inlineToken).join('');
}

function inlineToken(token: Token): string {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : escapeMrkdwn(t.text);
    }
    case 'escape':
      return escapeMrkdwn((token as Tokens.Escape).text);
    case 'strong':
      return wrap('*', inline((token as Tokens.Strong).tokens));
    case 'em':
      return wrap('_', inline((token as Tokens.Em).tokens));
    case 'del':
      return wrap('~', inline((token as Tokens.Del).tokens));
    case 'codespan': {
      const code = (token as Tokens.Codespan).text;
      if (!code.length) return '';
      // Inline code ends at the next backtick and mrkdwn has no escape for one. A preformatted
      // span (```…```) ends only at three, so a code span holding a backtick keeps every character.
      // Zero-width spaces keep a backtick at either end from merging with the fence.
      if (code.includes('`')) return '```\u200b' + neutraliseFence(escapeMrkdwn(code)) + '\u200b```';
      return '`' + escapeMrkdwn(code) + '`';
    }
    case 'br':
      return '\n';
    case 'link': {
      const t = token as Tokens.Link;
      return link(t.href, inline(t.tokens));
    }
    case 'image': {
      const t = token as Tokens.Image;
      return link(t.href, escapeMrkdwn(t.text || t.href));
    }
    case 'html':
      return escapeMrkdwn((token as Tokens.HTML).text);
    default: {
      const generic = token as Tokens.Generic;
      if (generic.tokens) return inline(generic.tokens);
      return escapeMrkdwn(typeof generic.text === 'string' ? generic.text : generic.raw);
    }
  }
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

function list(token: Tokens.List, depth: number): string {
  const start = typeof token.start === 'number' ? token.start : 1;
  const indent = '    '.repeat(depth);
  const lines: string[] = [];
  token.items.forEach((item, i) => {
    const bullet = token.ordered ? `${start + i}.` : depth % 2 === 0 ? '•' : '◦';
    const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
    const parts: string[] = [];
    for (const child of item.tokens) {
      if (child.type === 'list') parts.push(list(child as Tokens.List, depth + 1));
      else if (child.type === 'checkbox') continue;
      else {
        const rendered = block(child, depth + 1);
        if (rendered.text) parts.push(rendered.text);
      }
    }
    const [first = '', ...rest] = parts;
    lines.push(`${indent}${bullet} ${box}${first}`);
    lines.push(...rest);
  });
  return lines.join('\n');
}

function table(token: Tokens.Table): string {
  // Slack has no tables: a monospaced grid in a code block keeps the columns readable.
  const plainCell = (cell: Tokens.TableCell) => plain(cell.tokens).replace(/\n/g, ' ');
  const rows = [token.header.map(plainCell), ...token.rows.map((r) => r.map(plainCell))];
  const widths = token.header.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const fmt = (r: string[]) =>
    r
      .map((cell, c) => {
        const w = widths[c] ?? cell.length;
        const align = token.align[c];
        if (align === 'right') return cell.padStart(w);
        if (align === 'center') return cell.padStart(Math.floor((w + cell.length) / 2)).padEnd(w);
        return cell.padEnd(w);
      })
      .join(' | ')
      .trimEnd();
  const sep = widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-+-');
  const [head = [], ...body] = rows;
  return fenceCode([fmt(head), sep, ...body.map(fmt)].join('\n'));
}

/** Text content of inline tokens without any markup (for table cells). */
function plain(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((t) => {
      const g = t as Tokens.Generic;
      if (t.type === 'br') return ' ';
      if (g.tokens && t.type !== 'codespan') return plain(g.tokens);
      return typeof g.text === 'string' ? g.text : g.raw;
    })
    .join('');
}

function block(token: Token, depth = 0): MrkdwnSegment {
  switch (token.type) {
    case 'code':
      return { kind: 'code', text: fenceCode((token as Tokens.Code).text) };
    case 'table':
      return { kind: 'code', text: table(token as Tokens.Table) };
    case 'heading':
      return { kind: 'text', text: wrap('*', inline((token as Tokens.Heading).tokens)) };
    case 'paragraph':
      return { kind: 'text', text: inline((token as Tokens.Paragraph).tokens) };
    case 'list':
      return { kind: 'text', text: list(token as Tokens.List, depth) };
    case 'blockquote': {
      const inner = (token as Tokens.Blockquote).tokens.map((t) => block(t, depth).text).filter(Boolean);
      const text = inner
        .join('\n\n')
        .split('\n')
        .map((l) => `> ${l}`)
        .join('\n');
      return { kind: 'text', text };
    }
    case 'hr':
      return { kind: 'text', text: '────────' };
    case 'space':
    case 'def':
      return { kind: 'text', text: '' };
    case 'html':
      return { kind: 'text', text: escapeMrkdwn((token as Tokens.HTML).text.trim()) };
    case 'text': {
      const t = token as Tokens.Text;
      return { kind: 'text', text: t.tokens ? inline(t.tokens) : escapeMrkdwn(t.text) };
    }
    default:
      return { kind: 'text', text: inlineToken(token) };
  }
}

/** Render Markdown to mrkdwn segments (empty blocks dropped). */
export function markdownToSegments(markdown: string): MrkdwnSegment[] {
  return tokensToSegments(lexer(markdown));
}

/** Render already parsed Markdown (the presenter parses once for every platform). */
export function tokensToSegments(tokens: Token[]): MrkdwnSegment[] {
  return tokens.map((t) => block(t)).filter((s) => s.text.trim().length > 0);
}

/** Render Markdown to one mrkdwn string (blocks separated by a blank line). */
export function markdownToMrkdwn(markdown: string): string {
  return markdownToSegments(markdown)
    .map((s) => s.text)
    .join('\n\n');
}

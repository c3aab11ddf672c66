/**
 * Model Markdown → Telegram HTML: Telegram's dialect for the shared walker in
 * `delivery/markup.ts`. Telegram's HTML subset has no headings, lists or tables, so headings
 * become bold, lists become bullet lines and tables become a monospace block. Every text node is
 * escaped.
 */
import { type Token, marked } from 'marked';
import { escapeHtml, gridText, listMarker, renderBlocks } from '../../kit/index.js';
import type { Dialect } from '../../kit/index.js';

// Text escaped for Telegram HTML (`"` too, so it is safe inside attributes): the kit's, shared with the web chat.
export { escapeHtml };

/** Link targets Telegram may open; any other link is shown as its text. */
const SAFE_HREF = /^(https?:|mailto:|tg:)/i;
/** A language name Telegram may put in a code block's class. */
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,32}$/;

/** Widest a table column is padded to: a wider cell would make every row wrap on a phone. */
const TABLE_COLUMN_MAX = 40;

const telegram: Dialect = {
  escape: escapeHtml,
  strong: (inner) => `<b>${inner}</b>`,
  em: (inner) => `<i>${inner}</i>`,
  del: (inner) => `<s>${inner}</s>`,
  heading: (inner) => `<b>${inner}</b>`,
  codespan: (code) => `<code>${escapeHtml(code)}</code>`,
  link(href, label) {
    const text = label || escapeHtml(href);
    return SAFE_HREF.test(href) ? `<a href="${escapeHtml(href)}">${text}</a>` : text;
  },
  untitledImage: 'image',
  code(text, language) {
    const cls = LANGUAGE.test(language) ? ` class="language-${language}"` : '';
    return `<pre><code${cls}>${escapeHtml(text)}</code></pre>`;
  },
  table: (rows) =>
    `<pre>${escapeHtml(
      gridText(
        rows.map((r) => r.map((c) => c.trim())),
        undefined,
        TABLE_COLUMN_MAX,
      ),
    )}</pre>`,
  quote(blocks, nested) {
    // Telegram rejects nested blockquotes: an inner quote is rendered as plain lines.
    const inner = blocks.join('\n');
    if (!inner) return '';
    return nested ? inner : `<blockquote>${inner}</blockquote>`;
  },
  quoteKeepsDepth: false,
  htmlBlock: (text) => escapeHtml(text.trimEnd()),
  hr: '———',
  list: {
    indent: '  ',
    marker: listMarker({ boxes: ['☑', '☐'] }),
    continuation: (depth) => '  '.repeat(depth + 1),
    nestedOnOwnLine: true,
  },
};

/**
 * Render Markdown to Telegram HTML blocks (paragraphs, code blocks, tables, ...). Each block is
 * balanced HTML on its own; join with a blank line, or hand them to `splitHtml` for long text.
 */
export function markdownToHtmlBlocks(markdown: string): string[] {
  return tokensToHtmlBlocks(marked.lexer(markdown, { gfm: true }));
}

/** Render already parsed Markdown (the presenter parses once for every platform). */
export function tokensToHtmlBlocks(tokens: Token[]): string[] {
  return renderBlocks(telegram, tokens).map((b) => b.text);
}

/** Render Markdown to one Telegram HTML string. */
export function markdownToHtml(markdown: string): string {
  return markdownToHtmlBlocks(markdown).join('\n\n');
}

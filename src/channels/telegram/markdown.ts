/**
 * Model Markdown → Telegram HTML, walking `marked`'s token tree (a real parser; no regex
 * rendering). Telegram's HTML subset has no headings, lists or tables, so headings become bold,
 * lists become bullet lines and tables become a monospace block. Every text node is escaped.
 */
import { type Token, type Tokens, marked } from 'marked';

/** Escape text for Telegram HTML (`<`, `>`, `&`; `"` too, so it is safe inside attributes). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const SAFE_HREF = /^(https?:|mailto:|tg:)/i;

function inline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens.map(inlineToken).join('');
}

function inlineToken(t: Token): string {
  switch (t.type) {
    case 'text': {
      const tt = t as Tokens.Text;
      return tt.tokens ? inline(tt.tokens) : escapeHtml(tt.text);
    }
    case 'escape':
      return escapeHtml((t as Tokens.Escape).text);
    case 'strong':
      return `<b>${inline((t as Tokens.Strong).tokens)}</b>`;
    case 'em':
      return `<i>${inline((t as Tokens.Em).tokens)}</i>`;
    case 'del':
      return `<s>${inline((t as Tokens.Del).tokens)}</s>`;
    case 'codespan':
      return `<code>${escapeHtml((t as Tokens.Codespan).text)}</code>`;
    case 'br':
      return '\n';
    case 'link': {
      const l = t as Tokens.Link;
      const label = inline(l.tokens) || escapeHtml(l.href);
      return SAFE_HREF.test(l.href) ? `<a href="${escapeHtml(l.href)}">${label}</a>` : label;
    }
    case 'image': {
      const im = t as Tokens.Image;
      const alt = escapeHtml(im.text || 'image');
      return SAFE_HREF.test(im.href) ? `<a href="${escapeHtml(im.href)}">${alt}</a>` : alt;
    }
    case 'html':
      // Raw HTML from the model is shown as text: Telegram would reject most tags.
      return escapeHtml((t as Tokens.HTML).text);
    default:
      return escapeHtml('raw' in t && typeof t.raw === 'string' ? t.raw : '');
  }
}

/** Plain text of inline tokens (for table cells, whose width we must measure). */
function plainInline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((t) => {
      if ('tokens' in t && Array.isArray(t.tokens) && t.type !== 'codespan') return plainInline(t.tokens as Token[]);
      if (t.type === 'br') return ' ';
      if (t.type === 'image') return (t as Tokens.Image).text;
      return 'text' in t && typeof t.text === 'string' ? t.text : '';
    })
    .join('');
}

function codeBlock(text: string, lang?: string): string {
  const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
  const cls = /^[A-Za-z0-9_+#.-]{1,32}$/.test(language) ? ` class="language-${language}"` : '';
  return `<pre><code${cls}>${escapeHtml(text)}</code></pre>`;
}

function table(t: Tokens.Table): string {
  const header = t.header.map((c) => plainInline(c.tokens).trim());
  const rows = t.rows.map((r) => r.map((c) => plainInline(c.tokens).trim()));
  const widths = header.map((h, i) => Math.min(40, Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join(' | ')
      .trimEnd();
  const sep = widths.map((w) => '-'.repeat(Math.max(1, w))).join('-+-');
  return `<pre>${escapeHtml([line(header), sep, ...rows.map(line)].join('\n'))}</pre>`;
}

function list(t: Tokens.List, depth: number, inQuote: boolean): string {
  const indent = '  '.repeat(depth);
  const start = typeof t.start === 'number' ? t.start : 1;
  return t.items
    .map((item, i) => {
      const marker = item.task ? (item.checked ? '☑' : '☐') : t.ordered ? `${start + i}.` : '•';
      const parts: string[] = [];
      for (const child of item.tokens) {
        if (child.type === 'list') parts.push(`\n${list(child as Tokens.List, depth + 1, inQuote)}`);
        else if (child.type === 'checkbox') continue;
        else {
          const body = block(child, depth + 1, inQuote);
          if (body) parts.push(parts.length ? `\n${indent}  ${body}` : body);
        }
      }
      return `${indent}${marker} ${parts.join('')}`;
    })
    .join('\n');
}

function block(t: Token, depth = 0, inQuote = false): string {
  switch (t.type) {
    case 'space':
    case 'def':
      return '';
    case 'heading':
      return `<b>${inline((t as Tokens.Heading).tokens)}</b>`;
    case 'paragraph':
      return inline((t as Tokens.Paragraph).tokens);
    case 'text': {
      const tt = t as Tokens.Text;
      return tt.tokens ? inline(tt.tokens) : escapeHtml(tt.text);
    }
    case 'code':
      return codeBlock((t as Tokens.Code).text, (t as Tokens.Code).lang);
    case 'table':
      return table(t as Tokens.Table);
    case 'list':
      return list(t as Tokens.List, depth, inQuote);
    case 'blockquote': {
      // Telegram rejects nested blockquotes: an inner quote is rendered as plain lines.
      const inner = blocks((t as Tokens.Blockquote).tokens, true).join('\n');
      if (!inner) return '';
      return inQuote ? inner : `<blockquote>${inner}</blockquote>`;
    }
    case 'hr':
      return '———';
    case 'html':
      return escapeHtml((t as Tokens.HTML).text.trimEnd());
    default:
      return escapeHtml('raw' in t && typeof t.raw === 'string' ? t.raw : '');
  }
}

function blocks(tokens: Token[], inQuote = false): string[] {
  return tokens.map((t) => block(t, 0, inQuote)).filter((s) => s.length > 0);
}

/**
 * Render Markdown to Telegram HTML blocks (paragraphs, code blocks, tables, ...). Each block is
 * balanced HTML on its own; join with a blank line, or hand them to `splitHtml` for long text.
 */
export function markdownToHtmlBlocks(markdown: string): string[] {
  return tokensToHtmlBlocks(marked.lexer(markdown, { gfm: true }));
}

/** Render already parsed Markdown (the presenter parses once for every platform). */
export function tokensToHtmlBlocks(tokens: Token[]): string[] {
  return blocks(tokens);
}

/** Render Markdown to one Telegram HTML string. */
export function markdownToHtml(markdown: string): string {
  return markdownToHtmlBlocks(markdown).join('\n\n');
}

/**
 * Markdown in the terminal chat: a dialect of the shared walker (`delivery/markup.ts`). On a
 * terminal, bold, italic, struck text, headings and code are ANSI styles; elsewhere (a pipe, a
 * file) plain text. Lists get bullets, tables a grid, links their address, code blocks an indent.
 * Control characters in the text are dropped, so a reply cannot move the cursor or recolour the
 * terminal.
 *
 * A streamed reply is printed a top-level block at a time ({@link MarkdownStream}): a block is
 * complete once the next one has begun, and only then can it be rendered right.
 */
import { lexer, type Token } from 'marked';
import { lineGrid, listMarker, prefixLines, renderBlocks } from '../../kit/index.js';
import type { Dialect, Span } from '../../kit/index.js';

/** C0 controls but tab and newline, DEL and C1 controls (ESC starts every terminal sequence). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text without control characters. */
function clean(text: string): string {
  return text.replace(CONTROL, '');
}

type Style = (inner: string) => string;

const plain: Style = (inner) => inner;

/** An SGR style that is switched on before `inner` and off after it. */
function sgr(on: number, off: number): Style {
  return (inner) => (inner ? `\x1b[${on}m${inner}\x1b[${off}m` : inner);
}

/** The styles of a terminal, or none. */
function styles(color: boolean) {
  return color
    ? { bold: sgr(1, 22), italic: sgr(3, 23), strike: sgr(9, 29), code: sgr(36, 39), dim: sgr(2, 22) }
    : { bold: plain, italic: plain, strike: plain, code: plain, dim: plain };
}

/** The terminal's dialect: ANSI styles when `color`, plain text otherwise. */
export function terminalDialect(color: boolean): Dialect {
  const s = styles(color);
  return {
    escape: clean,
    strong: s.bold,
    em: s.italic,
    del: s.strike,
    heading: s.bold,
    codespan: (code) => s.code(clean(code)),
    link(href, label) {
      const url = clean(href);
      return !label || label === url ? url : `${label} ${s.dim(`(${url})`)}`;
    },
    code: (text) =>
      clean(text.replace(/\n+$/, ''))
        .split('\n')
        .map((line) => `  ${s.code(line)}`)
        .join('\n'),
    table: (rows, align) => lineGrid(rows, align, clean),
    quote: (blocks) => prefixLines(blocks, `${s.dim('│')} `),
    quoteKeepsDepth: true,
    htmlBlock: (text) => clean(text.trimEnd()),
    hr: s.dim('────────'),
    list: {
      indent: '  ',
      marker: listMarker({ boxes: ['[x]', '[ ]'] }),
      continuation: (depth) => '  '.repeat(depth + 1),
      nestedOnOwnLine: true,
    },
  };
}

/** Rendered top-level blocks, joined by a blank line. */
function renderTokens(tokens: Token[], color: boolean): string {
  return renderBlocks(terminalDialect(color), tokens)
    .map((b) => b.text)
    .join('\n\n');
}

/** Markdown as the terminal shows it (ANSI styles when `color`). */
export function terminalMarkdown(markdown: string, color: boolean): string {
  return renderTokens(lexer(markdown, { gfm: true }), color);
}

/** A line of spans (a notice's text and its code spans) as the terminal shows it. */
export function terminalSpans(spans: readonly Span[], color: boolean): string {
  const s = styles(color);
  return spans
    .map((span) =>
      typeof span === 'string'
        ? clean(span)
        : 'strong' in span
          ? s.bold(clean(span.strong))
          : 'code' in span
            ? s.code(clean(span.code))
            : clean(span.who),
    )
    .join('');
}

/**
 * A reply streamed in pieces, printed a top-level block at a time: the last block may still grow
 * (a paragraph continuing, a list gaining items, a fence not yet closed), so a block is rendered
 * once another has begun after it, and the rest when the reply ends.
 */
export class MarkdownStream {
  private text = '';
  /** Top-level blocks already handed out. */
  private shown = 0;

  constructor(private readonly color: boolean) {}

  /** Words streamed so far (a terminal shows them as progress). */
  get words(): number {
    return this.text.split(/\s+/).filter(Boolean).length;
  }

  /**
   * Add streamed text; returns the blocks complete now, rendered, as one piece to print (a blank
   * line before each block but the reply's first), or null when none is.
   */
  push(delta: string): string | null {
    this.text += delta;
    // A block can only end, and the next begin, at a line break: no need to parse before one.
    if (!delta.includes('\n')) return null;
    const blocks = this.blocks();
    return this.render(blocks.slice(this.shown, Math.max(this.shown, blocks.length - 1)));
  }

  /**
   * The reply ended: its remaining blocks as one piece to print (null when none is left), and a
   * fresh start for the next reply. `final` is the whole reply as the model finished it, when
   * known (it wins over the pieces).
   */
  end(final?: string): string | null {
    if (final !== undefined) this.text = final;
    const rest = this.render(this.blocks().slice(this.shown));
    this.text = '';
    this.shown = 0;
    return rest;
  }

  /** Render the next blocks, counting them as shown. */
  private render(blocks: Token[]): string | null {
    const pieces: string[] = [];
    for (const block of blocks) {
      const text = renderTokens([block], this.color);
      if (text) pieces.push(this.shown > 0 || pieces.length > 0 ? `\n${text}` : text);
    }
    this.shown += blocks.length;
    return pieces.length ? pieces.join('\n') : null;
  }

  /** The top-level blocks of the text so far (blank space between them is no block). */
  private blocks(): Token[] {
    return lexer(this.text, { gfm: true }).filter((t) => t.type !== 'space' && t.type !== 'def');
  }
}

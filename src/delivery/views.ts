/**
 * A card view: what an approval card, a question card, a tool's status line or a notice shows, as
 * neutral data. The builders in `cards.ts` write every sentence; each channel keeps only a small
 * renderer of a view into its markup (Telegram HTML and an inline keyboard, Slack Block Kit, the
 * web chat's page). A view names people as principals, so each channel can say who as it can: a
 * Slack mention, a remembered Telegram name, the web chat's user name.
 */
import type { Button } from '../contract/actions.js';
import type { ToolContent } from '../contract/content.js';

/** A piece of a line: plain text, bold text, inline code, or a person. */
export type Span = string | { strong: string } | { code: string } | { who: string };

/** One block of a view, top to bottom. */
export type ViewBlock =
  /** The first line of a card: an icon, then what the card is or where it stands. */
  | { kind: 'heading'; icon: string; spans: Span[] }
  /** A line of text. */
  | { kind: 'text'; spans: Span[] }
  /** Preformatted text: a tool's preview, the tail of its output. Never parsed. */
  | { kind: 'code'; text: string }
  /** Words a person wrote (a note, an answer), quoted; `label` introduces them. */
  | { kind: 'quote'; label?: string; text: string }
  /** Small print under a card: who may act, how to answer. */
  | { kind: 'hint'; spans: Span[] };

/** What kind of card a view is (a channel may lay out or style kinds differently). */
export type CardKind = 'approval' | 'question' | 'tool' | 'notice';

/** A card as neutral data. */
export interface CardView {
  card: CardKind;
  /** The card's name, the same in every state of it (the web chat's accessible name). */
  name: string;
  /** Shown small, as one line of status (a tool line), rather than as a card. */
  compact: boolean;
  /** `error` for a notice of a failure (a channel may colour it). */
  tone?: 'error';
  /** A stable key of the card's buttons (Slack's `block_id`), e.g. `approval:<id>`. */
  key?: string;
  blocks: ViewBlock[];
  /** Rows of buttons; the channel's codec encodes each action, so a tap after a restart works. */
  buttons: Button[][];
  /** The card in one line of plain text, without names (notifications, look-ups, fallbacks). */
  fallback: string;
  /** A tool line as a task, for a platform's own task UI (Slack's task cards); the rest draws the line. */
  task?: TaskView;
}

/** A tool call as a platform's task UI shows it: a title, where it stands, and one piece of output. */
export interface TaskView {
  /** The tool call's label, plain (never parsed). */
  title: string;
  state: ToolContent['state'];
  /** The tail of its output while it runs, its summary's first line once finished; '' for none. */
  output: string;
}

/** The limits a channel declares for its cards (characters unless said otherwise). */
export interface CardLimits {
  /** A short label (a tool call's label), and a tool's one-line summary. */
  labelChars: number;
  /** A long text: a question, a notice. */
  textChars: number;
  /** What a person wrote: a note, an answer. */
  quoteChars: number;
  /**
   * The most of an approval's arguments a card shows, in the units of {@link measure}; longer
   * arguments are cut (the card says so) and sent whole as a file beside the card.
   */
  previewChars: number;
  /**
   * How much of {@link previewChars} a preview takes on this platform once drawn (Slack: the
   * escaped text in its code fence); default: its length in UTF-16 code units.
   */
  measure?: (preview: string) => number;
  /** The text of one button. */
  buttonChars: number;
  /** Suggested-answer buttons on a question card. */
  maxAnswers: number;
  /** The tail of a running tool's output, and at most this many of its last lines. */
  tailChars: number;
  tailLines: number;
}

/** How a channel's markup writes each kind of {@link Span} (each function escapes its text). */
export interface SpanMarks {
  text(text: string): string;
  strong(text: string): string;
  code(text: string): string;
  who(principal: string): string;
}

/** A line of spans in a channel's markup. */
export function renderSpans(spans: readonly Span[], marks: SpanMarks): string {
  return spans
    .map((s) =>
      typeof s === 'string'
        ? marks.text(s)
        : 'strong' in s
          ? marks.strong(s.strong)
          : 'code' in s
            ? marks.code(s.code)
            : marks.who(s.who),
    )
    .join('');
}

/** Trim text to `max` characters, marking the cut. */
export function trimText(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * `text` rendered (escaped, fenced) within `max` characters: its end cut and marked "…" until the
 * rendering fits, however much the rendering grew it.
 */
export function fitRendered(text: string, max: number, render: (text: string) => string): string {
  let kept = text;
  let out = render(kept);
  while (out.length > max) {
    kept = `${kept.slice(0, Math.max(0, kept.length - (out.length - max) - 1))}…`;
    out = render(kept);
  }
  return out;
}

/** The last `lines` lines of streamed output (trailing blank lines dropped), at most `chars` characters (cut at the front). */
export function outputTail(output: string, chars: number, lines: number): string {
  const kept = output.replace(/\r\n/g, '\n').trimEnd().split('\n').slice(-lines).join('\n');
  return kept.length > chars ? `…${kept.slice(-(chars - 1))}` : kept;
}

/**
 * Text over `max` characters as its beginning (a third) and its end, with how much was cut
 * between: a command's output starts with what it did and ends with how it went.
 */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = (n: number) => `\n… ${n} characters cut …\n`;
  const room = Math.max(0, max - cut(text.length).length);
  const head = Math.floor(room / 3);
  const tail = room - head;
  return `${text.slice(0, head)}${cut(text.length - head - tail)}${tail > 0 ? text.slice(-tail) : ''}`;
}

/** A view's spans as plain text, naming people with `nameOf`. */
export function spansText(spans: Span[], nameOf: (principal: string) => string): string {
  return spans
    .map((s) => (typeof s === 'string' ? s : 'strong' in s ? s.strong : 'code' in s ? s.code : nameOf(s.who)))
    .join('');
}

/** How a channel's markup writes each kind of {@link ViewBlock} (each function escapes its text). */
export interface BlockMarks {
  /** A line of spans: a text line, and a heading's after its icon. */
  spans(spans: Span[]): string;
  /** A heading's icon (default: as it is). */
  icon?(icon: string): string;
  code(text: string): string;
  quote(text: string, label: string | undefined): string;
  hint(spans: Span[]): string;
}

/** One block of a view in a channel's markup: the walk every renderer of views shares. */
export function renderViewBlock(b: ViewBlock, marks: BlockMarks): string {
  switch (b.kind) {
    case 'heading':
      return `${marks.icon ? marks.icon(b.icon) : b.icon} ${marks.spans(b.spans)}`;
    case 'text':
      return marks.spans(b.spans);
    case 'code':
      return marks.code(b.text);
    case 'quote':
      return marks.quote(b.text, b.label);
    case 'hint':
      return marks.hint(b.spans);
  }
}

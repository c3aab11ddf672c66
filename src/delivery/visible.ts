/**
 * Text as an approval card shows it: every character that prints nothing, moves the cursor,
 * changes the direction of the text around it or looks like a space without being one is
 * written as a mark, so what a person reads is what the tool receives. Line breaks stay line
 * breaks; nothing is folded or dropped.
 *
 * A mark is `⟨NAME⟩` for the common controls (`⟨TAB⟩`, `⟨CR⟩`, `⟨ESC⟩`, …) and `⟨U+XXXX⟩` or
 * `⟨U+XXXX NAME⟩` for the rest (`⟨U+202E RLO⟩`, `⟨U+200B ZWSP⟩`). A `⟨` that is in the text itself
 * is marked too (`⟨U+27E8⟩`), so every `⟨` on a card starts a mark and no text can pass for one.
 */

/** Opens every mark (U+27E8 MATHEMATICAL LEFT ANGLE BRACKET); closed by `⟩` (U+27E9). */
export const MARK_OPEN = '\u27e8';
/** Closes a mark. */
export const MARK_CLOSE = '\u27e9';

/** Short names of the controls people meet in commands and files. */
const CONTROL_NAMES: Record<number, string> = {
  0: 'NUL',
  7: 'BEL',
  8: 'BS',
  9: 'TAB',
  11: 'VT',
  12: 'FF',
  13: 'CR',
  27: 'ESC',
  127: 'DEL',
};

/** The usual abbreviations of invisible and direction-changing characters, shown after the code point. */
const FORMAT_NAMES: Record<number, string> = {
  160: 'NBSP',
  173: 'SHY',
  847: 'CGJ',
  1564: 'ALM',
  4447: 'HANGUL FILLER',
  4448: 'HANGUL FILLER',
  6158: 'MVS',
  8203: 'ZWSP',
  8204: 'ZWNJ',
  8205: 'ZWJ',
  8206: 'LRM',
  8207: 'RLM',
  8232: 'LINE SEPARATOR',
  8233: 'PARAGRAPH SEPARATOR',
  8234: 'LRE',
  8235: 'RLE',
  8236: 'PDF',
  8237: 'LRO',
  8238: 'RLO',
  8288: 'WJ',
  8294: 'LRI',
  8295: 'RLI',
  8296: 'FSI',
  8297: 'PDI',
  12644: 'HANGUL FILLER',
  65279: 'BOM',
  65440: 'HANGUL FILLER',
};

/**
 * What is marked: controls (Cc) but the line feed, format characters (Cf: bidirectional
 * embeddings, overrides and isolates, zero-width characters, the BOM, tag characters), line and
 * paragraph separators, every space but U+0020, private-use, unassigned and lone surrogate code
 * points, variation selectors, the combining grapheme joiner, the Hangul fillers (letters that
 * print nothing), and `⟨` itself.
 */
const MARKED = new RegExp(
  [
    '[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Zs}\\p{Co}\\p{Cn}\\p{Cs}\\u115f\\u1160\\u3164\\uffa0\\u27e8]',
    // Combining characters, each on its own (they print nothing by themselves).
    '\\u034f',
    '[\\ufe00-\\ufe0f]',
    '[\\u{e0100}-\\u{e01ef}]',
  ].join('|'),
  'gu',
);

/** The mark of one code point. */
export function markOf(char: string): string {
  const cp = char.codePointAt(0) ?? 0;
  const control = CONTROL_NAMES[cp];
  if (control) return `${MARK_OPEN}${control}${MARK_CLOSE}`;
  const hex = cp.toString(16).toUpperCase().padStart(4, '0');
  const name = FORMAT_NAMES[cp];
  return `${MARK_OPEN}U+${hex}${name ? ` ${name}` : ''}${MARK_CLOSE}`;
}

/** Marks made so far, by character (a long text repeats the same few). */
const marks = new Map<string, string>([
  ['\n', '\n'],
  [' ', ' '],
]);

/** `text` with every character of {@link MARKED} written as its mark; line feeds and plain spaces kept. */
export function visibleText(text: string): string {
  return text.replace(MARKED, (char) => {
    let mark = marks.get(char);
    if (mark === undefined) {
      mark = markOf(char);
      if (marks.size < 4096) marks.set(char, mark);
    }
    return mark;
  });
}

/** How much of a text a shortened view leaves out. */
export interface CutInfo {
  /** The shown beginning (whole marks and characters only). */
  head: string;
  /** Characters of the visible text not shown. */
  restChars: number;
  /** Line breaks in the part not shown (lines of it, less one). */
  restLines: number;
}

/**
 * The longest beginning of `text` (a text made by {@link visibleText}) that `fits`, ending at a
 * line break when one is in its last fifth; never in the middle of a mark or of a surrogate pair.
 * `maxLength` bounds the search (a head never longer than it is looked for; default: the text).
 */
export function cutVisible(text: string, fits: (head: string) => boolean, maxLength = text.length): CutInfo {
  let lo = 0;
  let hi = Math.min(text.length, maxLength);
  // Binary search on the length: `fits` is monotone in the length for every measure used.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(text.slice(0, mid))) lo = mid;
    else hi = mid - 1;
  }
  let end = safeEnd(text, lo);
  const lineEnd = text.lastIndexOf('\n', end - 1);
  if (lineEnd > 0 && lineEnd >= end * 0.8) end = lineEnd;
  const rest = text.slice(end);
  return { head: text.slice(0, end), restChars: rest.length, restLines: (rest.match(/\n/g) ?? []).length };
}

/** `end`, moved back so that it splits neither a mark nor a surrogate pair. */
function safeEnd(text: string, end: number): number {
  let at = end;
  const open = text.lastIndexOf(MARK_OPEN, at - 1);
  // Marks hold no `⟩`: the first one after a mark's `⟨` closes it.
  const close = open === -1 ? -1 : text.indexOf(MARK_CLOSE, open);
  if (open !== -1 && (close === -1 || close >= at)) at = open;
  const code = text.charCodeAt(at - 1);
  if (at > 0 && code >= 0xd800 && code <= 0xdbff) at -= 1;
  return at;
}

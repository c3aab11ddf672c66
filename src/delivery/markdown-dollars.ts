/**
 * Markdown for a renderer that reads `$…$` as a formula (its source raw LaTeX), as Telegram's rich
 * messages do: a model's answer that names prices — "between $5 and $10" — could be drawn as one
 * formula with the words between the amounts. A `$` right before a digit is escaped (`\$`, a
 * CommonMark backslash escape) outside code spans and fenced code blocks, so it shows as a dollar
 * sign. A formula whose source starts with a digit is then shown as its source: the lesser harm,
 * since answers name prices far more often than such formulas. Platform-neutral: a channel whose
 * Markdown has formulas calls it on each packed part.
 */

/** A fenced code block's opening line: up to three spaces, then three or more backticks or tildes. */
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;

/** Whether `line` closes a fence opened by `fence` (the same character, at least as many). */
function closesFence(line: string, fence: string): boolean {
  const m = /^ {0,3}(`+|~+)\s*$/.exec(line);
  return !!m && m[1]![0] === fence[0] && m[1]!.length >= fence.length;
}

/** Length of the run of `ch` starting at `i`. */
function runLength(text: string, i: number, ch: string): number {
  let n = 0;
  while (text[i + n] === ch) n++;
  return n;
}

/** Where the code span opened by `n` backticks at `i` ends (after its closing run), or -1. */
function codeSpanEnd(line: string, i: number, n: number): number {
  let j = i + n;
  while (j < line.length) {
    if (line[j] !== '`') {
      j++;
      continue;
    }
    const m = runLength(line, j, '`');
    if (m === n) return j + m;
    j += m;
  }
  return -1;
}

/** One line outside fences: `$` before a digit escaped, code spans (closed on the line) kept. */
function escapeLine(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === '\\') {
      // An escaped character stays as written (an escaped `$` included).
      out += line.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (ch === '`') {
      const n = runLength(line, i, '`');
      const end = codeSpanEnd(line, i, n);
      out += line.slice(i, end === -1 ? i + n : end);
      i = end === -1 ? i + n : end;
      continue;
    }
    out += ch === '$' && /[0-9]/.test(line[i + 1] ?? '') ? '\\$' : ch;
    i++;
  }
  return out;
}

/**
 * `markdown` with each `$` before a digit escaped outside code; unchanged when the escapes would
 * take it past `maxChars` (the part was packed to the limit without them).
 */
export function escapePriceDollars(markdown: string, maxChars: number): string {
  if (!/\$[0-9]/.test(markdown)) return markdown;
  let fence: string | null = null;
  const lines = markdown.split('\n').map((line) => {
    if (fence) {
      if (closesFence(line, fence)) fence = null;
      return line;
    }
    const open = FENCE_OPEN.exec(line);
    if (open) {
      fence = open[1]!;
      return line;
    }
    return escapeLine(line);
  });
  const escaped = lines.join('\n');
  return escaped.length <= maxChars ? escaped : markdown;
}

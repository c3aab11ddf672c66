/**
 * The pure part of `edit_file` and `write_patch` edits: find `old_string`, decide which match
 * (exactly one, all with `replace_all`, or the one nearest `near_line`), and build the new text.
 * Errors say how many matches there were and on which lines.
 */
import { lineAt } from './file-io.js';

/** What to replace. */
export interface EditSpec {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  near_line?: number;
}

/** A successful edit. */
export interface EditOk {
  ok: true;
  content: string;
  /** Occurrences replaced. */
  replaced: number;
  /** 1-based first line of each replaced occurrence (in the old text). */
  lines: number[];
}

/** Find every non-overlapping occurrence of `needle`. */
export function findAll(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

function listLines(lines: number[]): string {
  const shown = lines.slice(0, 10).join(', ');
  return lines.length > 10 ? `${shown}, … (${lines.length} in all)` : shown;
}

/** Apply one edit to `content`. */
export function applyEdit(content: string, spec: EditSpec): EditOk | { ok: false; error: string } {
  if (spec.old_string.length === 0) return { ok: false, error: 'old_string is empty' };
  if (spec.old_string === spec.new_string) return { ok: false, error: 'old_string and new_string are identical' };
  const at = findAll(content, spec.old_string);
  if (at.length === 0) {
    const hint =
      spec.old_string.trim() !== spec.old_string || /\r/.test(content) ? ' (check whitespace and line endings)' : '';
    return {
      ok: false,
      error: `old_string not found (0 matches)${hint}; read the file again and copy the text exactly`,
    };
  }
  const lines = at.map((i) => lineAt(content, i));
  let chosen = at;
  if (at.length > 1 && !spec.replace_all) {
    if (spec.near_line === undefined) {
      return {
        ok: false,
        error: `old_string matches ${at.length} times (lines ${listLines(lines)}); add surrounding text to make it unique, set replace_all, or pass near_line`,
      };
    }
    const near = spec.near_line;
    const dist = lines.map((l) => Math.abs(l - near));
    const best = Math.min(...dist);
    const winners = at.filter((_, i) => dist[i] === best);
    if (winners.length > 1) {
      return {
        ok: false,
        error:
          `old_string matches ${at.length} times (lines ${listLines(lines)}) and near_line ${near} is equally ` +
          `close to several; pick a line nearer one of them`,
      };
    }
    chosen = winners;
  }
  let out = '';
  let last = 0;
  for (const i of chosen) {
    out += content.slice(last, i) + spec.new_string;
    last = i + spec.old_string.length;
  }
  out += content.slice(last);
  return { ok: true, content: out, replaced: chosen.length, lines: chosen.map((i) => lineAt(content, i)) };
}

/**
 * A -/+ preview of replacing `oldText` by `newText` for an approval card: every line of both,
 * nothing cut (the card shows what fits and sends the rest as a file).
 */
export function diffPreview(oldText: string, newText: string): string {
  const side = (text: string, mark: string) =>
    text
      .split('\n')
      .map((l) => `${mark} ${l}`)
      .join('\n');
  return `${side(oldText, '-')}\n${side(newText, '+')}`;
}

/** Which occurrences an edit replaces, in words for its card (empty: the only one). */
export function editScope(spec: Pick<EditSpec, 'replace_all' | 'near_line'>): string {
  if (spec.replace_all) return ' (all occurrences)';
  return spec.near_line === undefined ? '' : ` (the occurrence nearest line ${spec.near_line})`;
}
